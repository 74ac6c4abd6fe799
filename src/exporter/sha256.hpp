// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for serve's cache of checked basic-auth
// credentials: it keeps a keyed digest of each user and password, never the password. Written
// here from the standard because OpenSSL is loaded only when a web config asks for TLS.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace gpuscope::exporter {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::string_view data);

// HMAC-SHA-256 of `message` under `key`.
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

}  // namespace gpuscope::exporter
