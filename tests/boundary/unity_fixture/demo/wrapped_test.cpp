// A test file with its own namespace (tests/boundary/unity_namespaces.cmake accepts it).
namespace wrapped_test {
namespace {
int helper() { return 1; }
}  // namespace
}  // namespace wrapped_test
