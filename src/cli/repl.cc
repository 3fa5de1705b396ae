// The interactive chat loop: see repl.h. Ctrl-C sets one flag, g_sigint: during an answer through a
// SIGINT handler (installed without SA_RESTART), and ChatSession polls it and aborts the Generation;
// at the prompt through a libedit key binding (or, should the tty still send SIGINT, our read
// function seeing EINTR), which ends el_gets; we treat that as "clear the line". libedit's own
// signal handling (EL_SIGNAL) stays off: it re-raises signals to the whole process group.
#include "cli/repl.h"

#include <histedit.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"

namespace oxyd::cli {

const char* const kReplHelp =
    "Commands:\n"
    "  /help             this text\n"
    "  /clear            forget the conversation (the system prompt stays)\n"
    "  /system TEXT      set the system prompt (/system alone removes it)\n"
    "  /exit, /quit      leave (Ctrl-D on an empty line too)\n"
    "Input: Enter sends the line. For several lines start with \"\"\" and end with \"\"\".\n"
    "Ctrl-C stops the answer being written; at the prompt it clears the line.\n";

namespace {

volatile std::sig_atomic_t g_sigint = 0;

extern "C" void on_sigint(int) { g_sigint = 1; }

// Installs on_sigint for SIGINT (no SA_RESTART, so a blocked read() returns EINTR) and restores
// the previous action on destruction.
class SigintHandler {
 public:
  SigintHandler() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, &old_);
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &sigint, nullptr);  // cmd_run blocked it before starting threads
  }
  ~SigintHandler() { sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

// One byte from stdin: 1, 0 at end of input, -1 on error or once Ctrl-C set g_sigint. Waits in
// poll() slices: a SIGINT that lands just before a blocking read() would otherwise go unnoticed
// until the next key.
int read_byte(unsigned char& b) {
  for (;;) {
    if (g_sigint != 0) {
      errno = EINTR;
      return -1;
    }
    struct pollfd p {STDIN_FILENO, POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (r < 0 && errno != EINTR) return -1;
    if (r <= 0) continue;
    const ssize_t n = ::read(STDIN_FILENO, &b, 1);
    if (n == 1) return 1;
    if (n == 0) return 0;
    if (errno != EINTR && errno != EAGAIN) return -1;
  }
}

// libedit's read function (EL_GETCFN): one UTF-8 character as a wide character.
int read_char(EditLine*, wchar_t* wc) {
  *wc = 0;
  unsigned char b = 0;
  int r = read_byte(b);
  if (r != 1) return r;
  if (b < 0x80) {
    *wc = static_cast<wchar_t>(b);
    return 1;
  }
  const int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
  uint32_t cp = b & (0x3Fu >> extra);
  for (int i = 0; i < extra; ++i) {
    if ((r = read_byte(b)) != 1) return r;
    if ((b & 0xC0) != 0x80) break;
    cp = (cp << 6) | (b & 0x3Fu);
    if (i + 1 == extra) {
      *wc = static_cast<wchar_t>(cp);
      return 1;
    }
  }
  *wc = static_cast<wchar_t>(0xFFFD);  // malformed UTF-8
  return 1;
}

// Ctrl-C while libedit has the terminal: libedit's edit mode does not let the tty turn ^C into
// SIGINT here, so ^C is bound to this function, which ends el_gets like the signal does.
unsigned char on_ctrl_c(EditLine*, int) {
  g_sigint = 1;
  return CC_EOF;
}

const char* g_prompt = ">>> ";
char* prompt_fn(EditLine*) { return const_cast<char*>(g_prompt); }

enum class ReadStatus { LINE, INTERRUPTED, END };

class LineEditor {
 public:
  explicit LineEditor(std::string history_file) : history_file_(std::move(history_file)) {
    el_ = el_init("oxydllm", stdin, stdout, stderr);
    OXYD_CHECK(el_ != nullptr, "el_init failed");
    hist_ = history_init();
    HistEvent ev;
    history(hist_, &ev, H_SETSIZE, 1000);
    history(hist_, &ev, H_SETUNIQUE, 1);
    if (!history_file_.empty()) history(hist_, &ev, H_LOAD, history_file_.c_str());  // missing file: fine
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_PROMPT, prompt_fn);
    el_set(el_, EL_HIST, history, hist_);
    el_set(el_, EL_GETCFN, read_char);
    el_source(el_, nullptr);  // ~/.editrc, as other libedit programs
    el_set(el_, EL_ADDFN, "oxyd-interrupt", "clear the line (Ctrl-C)", on_ctrl_c);
    el_set(el_, EL_BIND, "^C", "oxyd-interrupt", nullptr);
  }
  ~LineEditor() {
    HistEvent ev;
    if (!history_file_.empty()) history(hist_, &ev, H_SAVE, history_file_.c_str());
    history_end(hist_);
    el_end(el_);
  }

  ReadStatus read(const char* prompt, std::string& line) {
    g_prompt = prompt;
    g_sigint = 0;
    el_resize(el_);  // no SIGWINCH handler (EL_SIGNAL is off): pick up the size per line
    int count = 0;
    const char* s = el_gets(el_, &count);
    if (g_sigint != 0) {
      g_sigint = 0;
      std::fputs("^C\n", stdout);
      std::fflush(stdout);
      return ReadStatus::INTERRUPTED;
    }
    if (s == nullptr || count <= 0) return ReadStatus::END;
    line.assign(s, static_cast<size_t>(count));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return ReadStatus::LINE;
  }
  void remember(const std::string& entry) {
    HistEvent ev;
    history(hist_, &ev, H_ENTER, entry.c_str());
  }

 private:
  std::string history_file_;
  EditLine* el_ = nullptr;
  History* hist_ = nullptr;
};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// One user input: a line, or a """ block (opening """ starts it, a line ending in """ ends it;
// the lines are joined with \n and the quotes dropped).
ReadStatus read_input(LineEditor& ed, std::string& text, bool& quoted) {
  std::string line;
  quoted = false;
  ReadStatus st = ed.read(">>> ", line);
  if (st != ReadStatus::LINE) return st;
  const std::string t = trim(line);
  if (!t.starts_with("\"\"\"")) {
    if (!t.empty()) ed.remember(line);
    text = line;
    return st;
  }
  quoted = true;
  std::string body = line.substr(line.find("\"\"\"") + 3);
  std::string entry = line;
  if (body.size() >= 3 && body.ends_with("\"\"\"")) {
    text = body.substr(0, body.size() - 3);
    ed.remember(entry);
    return st;
  }
  std::vector<std::string> lines;
  if (!body.empty()) lines.push_back(body);
  for (;;) {
    if ((st = ed.read("... ", line)) != ReadStatus::LINE) return st;  // Ctrl-C drops the block
    entry += "\n" + line;
    if (line.ends_with("\"\"\"")) {
      lines.push_back(line.substr(0, line.size() - 3));
      break;
    }
    lines.push_back(line);
  }
  ed.remember(entry);
  text.clear();
  for (size_t i = 0; i < lines.size(); ++i) text += (i ? "\n" : "") + lines[i];
  return st;
}

// A slash command; returns false when the session should end.
bool run_command(ChatSession& session, const std::string& cmdline) {
  const size_t sp = cmdline.find_first_of(" \t");
  const std::string cmd = cmdline.substr(0, sp);
  const std::string arg = sp == std::string::npos ? "" : trim(cmdline.substr(sp + 1));
  if (cmd == "/exit" || cmd == "/quit" || cmd == "/bye") return false;
  if (cmd == "/help" || cmd == "/?") {
    std::fputs(kReplHelp, stdout);
  } else if (cmd == "/clear") {
    session.clear();
    std::fputs("Cleared the conversation.\n", stdout);
  } else if (cmd == "/system") {
    session.set_system_prompt(arg);
    std::fputs(arg.empty() ? "System prompt removed.\n" : "System prompt set.\n", stdout);
  } else {
    std::printf("Unknown command %s (/help lists the commands; start with \"\"\" to send text beginning with /).\n",
                cmd.c_str());
  }
  return true;
}

}  // namespace

int run_repl(ChatSession& session, const std::string& model_id, const std::string& history_file) {
  // libedit turns the wide-character line back into bytes with the C library's locale.
  if (std::setlocale(LC_CTYPE, "") == nullptr || MB_CUR_MAX == 1) std::setlocale(LC_CTYPE, "C.UTF-8");
  SigintHandler sigint;
  LineEditor ed(history_file);
  std::printf("Chatting with %s. /help for commands, Ctrl-D or /exit to quit.\n", model_id.c_str());
  std::fflush(stdout);
  for (;;) {
    std::string text;
    bool quoted = false;
    const ReadStatus st = read_input(ed, text, quoted);
    if (st == ReadStatus::END) break;
    if (st == ReadStatus::INTERRUPTED) continue;
    const std::string t = trim(text);
    if (t.empty()) continue;
    if (!quoted && t.starts_with("/")) {
      if (!run_command(session, t)) break;
      std::fflush(stdout);
      continue;
    }
    g_sigint = 0;
    try {
      session.answer(text, stdout, &g_sigint);
      std::fputs("\n\n", stdout);
    } catch (const Error& e) {
      std::fprintf(stdout, "\n");
      std::fprintf(stderr, "error: %s%s\n", e.what(),
                   session.num_turns() > 0 ? " (/clear starts a new conversation)" : "");
    }
    g_sigint = 0;
    std::fflush(stdout);
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace oxyd::cli
