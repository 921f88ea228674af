// The precompiled header of the libraries and the binary (cmake/pch.cmake): nlohmann/json and
// the std headers nearly every translation unit parses. Only external and std headers: a project
// header here would hide a missing include.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
