// A fixture for tests/boundary/check_includes.cmake: the scan must refuse this file.
#include <re2/re2.h>
