// A fixture for tests/boundary/check_includes.cmake: the scan must refuse this file.
#  include "yaml-cpp/yaml.h"
