// Text from outside (a server's error body, a header, a label value, a line of a file) made safe
// to quote into a message on a terminal: its control bytes shown, never acted on. An escape
// sequence would otherwise recolour, retitle or clear the terminal, a BEL ring it, and a newline
// forge a line of gpuscope's own ("gpuscope: note: ...").
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::util {

// `text` with every control character written visibly: \n, \r, \t, and \xNN for the other
// C0 bytes and DEL (\x1b for ESC, \x07 for BEL); the C1 controls, the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators (U+2028,
// U+2029) as \u{XXXX}; a byte that is not part of valid UTF-8 as \xNN. Other UTF-8 text and
// backslashes are kept as they are.
std::string visible(std::string_view text);

}  // namespace gpuscope::util
