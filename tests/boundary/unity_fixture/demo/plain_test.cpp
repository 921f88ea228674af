// A test file without its own namespace (tests/boundary/unity_namespaces.cmake must refuse it).
namespace {
int helper() { return 1; }
}  // namespace
