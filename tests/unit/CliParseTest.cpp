//===- CliParseTest.cpp - Option values: --dim ----------------------------===//
#include "tools/CliParse.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace perfc;

namespace {

std::string dimError(std::vector<std::string> Specs) {
  auto R = parseDimSpecs(Specs);
  if (R) {
    FAIL_CHECK("parsed where an error was expected");
    return "";
  }
  return llvm::toString(R.takeError());
}

} // namespace

TEST_CASE("--dim NAME=VALUE: names and positive values, in order") {
  auto R = parseDimSpecs({"seq=128", "batch=4", "seq=256"});
  REQUIRE(bool(R));
  REQUIRE(R->size() == 3);
  CHECK((*R)[0] == std::make_pair(std::string("seq"), int64_t(128)));
  CHECK((*R)[1] == std::make_pair(std::string("batch"), int64_t(4)));
  CHECK((*R)[2].second == 256);
  auto Max = parseDimSpecs({"n=9223372036854775807"});
  REQUIRE(bool(Max));
  CHECK((*Max)[0].second == INT64_MAX);
  auto None = parseDimSpecs({});
  REQUIRE(bool(None));
  CHECK(None->empty());
}

TEST_CASE("--dim errors are one line naming the spec") {
  const char *Expected = "': expected NAME=VALUE with a positive integer";
  CHECK(dimError({"seq"}) == std::string("--dim 'seq") + Expected);
  CHECK(dimError({"=3"}) == std::string("--dim '=3") + Expected);
  CHECK(dimError({"seq=0"}) == std::string("--dim 'seq=0") + Expected);
  CHECK(dimError({"seq=-1"}) == std::string("--dim 'seq=-1") + Expected);
  CHECK(dimError({"seq=0x10"}) == std::string("--dim 'seq=0x10") + Expected);
  CHECK(dimError({"seq=9223372036854775808"}) ==
        std::string("--dim 'seq=9223372036854775808") + Expected);
  CHECK(dimError({"seq=1", "b="}) == std::string("--dim 'b=") + Expected);
  // Control characters are escaped: the message stays one line.
  CHECK(dimError({"a\nb=1x"}) == std::string("--dim 'a\\0Ab=1x") + Expected);
}
