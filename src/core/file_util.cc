#include "core/file_util.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace oxyd {

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(ErrorCode::NOT_FOUND, path + ": cannot open the file");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw_error(ErrorCode::IO, path + ": read error");
  return ss.str();
}

}  // namespace oxyd
