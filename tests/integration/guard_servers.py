"""The servers guard's notify test sends to, started by guard_notify_test.sh:

  guard_servers.py smtp PORT DIR CERT KEY USER PASSWORD   an SMTP server (aiosmtpd) that offers
      STARTTLS and requires it, and AUTH over it, before MAIL; each mail is saved in DIR
  guard_servers.py plain-smtp PORT DIR                    one that offers no STARTTLS
  guard_servers.py webhook PORT FILE                      an HTTP server saving each POST's body
      as one line of FILE
"""
import http.server
import os
import ssl
import sys
import time

def smtp(port, folder, cert=None, key=None, user=None, password=None):
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    class Save:
        async def handle_DATA(self, server, session, envelope):
            name = os.path.join(folder, f"{time.time_ns()}.eml")
            with open(name, "wb") as f:
                f.write(b"X-Envelope-To: " + ",".join(envelope.rcpt_tos).encode() + b"\r\n")
                f.write(envelope.content)
            return "250 OK"

    def check(server, session, envelope, mechanism, auth_data):
        ok = auth_data.login == user.encode() and auth_data.password == password.encode()
        return AuthResult(success=ok)

    options = {}
    if cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        options = dict(tls_context=context, require_starttls=True, auth_required=True,
                       auth_require_tls=True, authenticator=check)
    controller = Controller(Save(), hostname="127.0.0.1", port=port, **options)
    controller.start()
    while True:
        time.sleep(3600)

def webhook(port, path):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with open(path, "ab") as f:
                f.write(body.replace(b"\n", b" ") + b"\n")
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()

if __name__ == "__main__":
    kind, port = sys.argv[1], int(sys.argv[2])
    if kind == "smtp":
        smtp(port, *sys.argv[3:8])
    elif kind == "plain-smtp":
        smtp(port, sys.argv[3])
    else:
        webhook(port, sys.argv[3])
