#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H
// Debian's libsqlite3 (3.40.1): plain databases only.
#include <sqlite3.h>

/// sqlite3_config is variadic and cannot be called from Swift: this installs the global error log.
static inline int ferry_sqlite3_config_log(void (*callback)(void *, int, const char *), void *context) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, context);
}
#endif
