# TCP ports for the shell tests that start servers; `source` it. The C++ tests have ports.hpp.

# A loopback port nobody listens on right now (the kernel's choice).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
