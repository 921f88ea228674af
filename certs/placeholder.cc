// Replaced by the certificate code (issue: the TLS admission webhook).
namespace gpuadmit {}
