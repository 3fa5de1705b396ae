// ConnectionWatch (see connection_watch.h). Addresses are compared as text in the form httplib
// gives them (getnameinfo NI_NUMERICHOST), ports as numbers; only descriptors whose ports match
// are formatted.
#include "server/connection_watch.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>

#include <httplib.h>

namespace oxyd::server {

namespace {

int port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

bool same_address(const sockaddr_storage& a, socklen_t len, const std::string& want) {
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return false;
  return want == host;
}

// The fd's local or peer end is (addr, port).
bool end_is(int fd, bool peer, const std::string& addr, int port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return rc == 0 && port_of(a) == port && same_address(a, len, addr);
}

}  // namespace

ConnectionWatch::ConnectionWatch(const httplib::Request& req)
    : ConnectionWatch(req.local_addr, req.local_port, req.remote_addr, req.remote_port) {}

ConnectionWatch::ConnectionWatch(const std::string& local_addr, int local_port, const std::string& remote_addr,
                                 int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  const int dir_fd = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int fd = std::atoi(e->d_name);
    if (fd == dir_fd) continue;
    // Local end first: it rules out every descriptor that is not a socket of this listener.
    if (end_is(fd, false, local_addr, local_port) && end_is(fd, true, remote_addr, remote_port)) {
      fd_ = fd;
      break;
    }
  }
  closedir(dir);
}

bool ConnectionWatch::client_gone() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, short(POLLIN | POLLRDHUP), 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return true;  // reset, or closed both ways
  char c;
  const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // end of stream: the client closed (or half-closed) its side
  if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;  // ECONNRESET etc.
  return false;  // bytes waiting: the next request of a keep-alive connection
}

}  // namespace oxyd::server
