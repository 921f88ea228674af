// Replaced by lint (issue: lint mode).
namespace gpuadmit {}
