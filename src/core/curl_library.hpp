// libcurl, loaded when a push or a grid intensity API is asked for rather than linked: with
// Debian's libcurl4 come OpenSSL, GnuTLS, Kerberos and LDAP, about 7 MB of resident memory that
// `gpuscope serve` without
// --push, and every other command, should not carry (docs/live.md). curl's header gives the
// types and constants; the functions come from the library found at run time.
#pragma once

#include <curl/curl.h>

namespace gpuscope {

struct CurlLibrary {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  CURLU* (*url)();
  void (*url_cleanup)(CURLU*);
  CURLUcode (*url_set)(CURLU*, CURLUPart, const char*, unsigned int);
  CURLUcode (*url_get)(const CURLU*, CURLUPart, char**, unsigned int);
  void (*free)(void*);
};

// Loads libcurl.so.4 on first use (thread-safe) and keeps it for the life of the process.
// Throws Error saying what to install when it is missing or too old (7.62 for the URL API).
const CurlLibrary& curl_library();

}  // namespace gpuscope
