// Replaced by the webhook server (issue: the TLS admission webhook).
namespace gpuadmit {}
