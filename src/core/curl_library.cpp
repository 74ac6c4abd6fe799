#include "core/curl_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gpuscope {
namespace {

template <typename F>
void bind_symbol(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  if (!function) {
    throw Error(fmt::format("the libcurl found has no {}", name), "it is too old, or not libcurl",
                "install libcurl 7.62 or newer (Debian/Ubuntu: apt install libcurl4)");
  }
}

}  // namespace

const CurlLibrary& curl_library() {
  static const CurlLibrary api = [] {
    dlerror();
    void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      throw Error("--push needs libcurl, which could not be loaded",
                  why ? why : "libcurl.so.4 was not found",
                  "install it (Debian/Ubuntu: apt install libcurl4; RHEL: dnf install libcurl)");
    }
    CurlLibrary c{};
    bind_symbol(library, "curl_global_init", c.global_init);
    bind_symbol(library, "curl_easy_init", c.easy_init);
    bind_symbol(library, "curl_easy_setopt", c.easy_setopt);
    bind_symbol(library, "curl_easy_perform", c.easy_perform);
    bind_symbol(library, "curl_easy_getinfo", c.easy_getinfo);
    bind_symbol(library, "curl_easy_cleanup", c.easy_cleanup);
    bind_symbol(library, "curl_easy_strerror", c.easy_strerror);
    bind_symbol(library, "curl_slist_append", c.slist_append);
    bind_symbol(library, "curl_slist_free_all", c.slist_free_all);
    bind_symbol(library, "curl_url", c.url);
    bind_symbol(library, "curl_url_cleanup", c.url_cleanup);
    bind_symbol(library, "curl_url_set", c.url_set);
    bind_symbol(library, "curl_url_get", c.url_get);
    bind_symbol(library, "curl_free", c.free);
    c.global_init(CURL_GLOBAL_DEFAULT);
    return c;
  }();
  return api;
}

}  // namespace gpuscope
