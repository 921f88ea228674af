// The precompiled header of every test executable (tests/CMakeLists.txt): the headers nearly all
// of them parse. Only external and std headers: a project header here would hide a missing include.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>
