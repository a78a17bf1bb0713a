#ifndef FERRY_FAULT_VFS_H
#define FERRY_FAULT_VFS_H
// A fault-injecting SQLite VFS for Ferry's tests.
//
// `ferry_fault_vfs_register()` registers a VFS named "ferry-fault" (never the default) that wraps
// the default VFS: every call goes through to it, except that armed rules can make an operation
// fail instead. Operations are counted per file path and kind of file, so a test can run a
// scenario once without faults, read how many reads/writes/syncs/locks it did on a file, and then
// fail each of them in turn.
//
// All state is behind one mutex: any number of connections on any threads may use the VFS.
// This header deliberately does not include sqlite3.h (the engine is chosen by the package trait).

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The operations the VFS counts and can fail.
typedef enum {
    FERRY_FAULT_OP_OPEN = 0,      ///< xOpen (fails with SQLITE_CANTOPEN for the I/O-error class)
    FERRY_FAULT_OP_READ = 1,      ///< xRead
    FERRY_FAULT_OP_WRITE = 2,     ///< xWrite
    FERRY_FAULT_OP_SYNC = 3,      ///< xSync
    FERRY_FAULT_OP_LOCK = 4,      ///< xLock (file locks: SHARED, RESERVED, EXCLUSIVE)
    FERRY_FAULT_OP_TRUNCATE = 5,  ///< xTruncate
    FERRY_FAULT_OP_FILESIZE = 6,  ///< xFileSize
    FERRY_FAULT_OP_SHMLOCK = 7,   ///< xShmLock (WAL-index locks: the WAL write and read locks)
    FERRY_FAULT_OP_SHMMAP = 8,    ///< xShmMap
    FERRY_FAULT_OP_COUNT = 9
} FerryFaultOp;

/// Kinds of files, as a bit mask (from the flags SQLite passes to xOpen).
enum {
    FERRY_FAULT_FILE_MAIN_DB = 1,  ///< a database file (main or attached)
    FERRY_FAULT_FILE_WAL = 2,      ///< a -wal file
    FERRY_FAULT_FILE_JOURNAL = 4,  ///< a rollback journal (-journal)
    FERRY_FAULT_FILE_OTHER = 8,    ///< temp files, statement journals, super-journals
    FERRY_FAULT_FILE_ANY = 15
};

/// When a rule fires, counting only the operations it matches, from 0, since it was armed.
typedef enum {
    FERRY_FAULT_NTH = 0,     ///< the operation with index `n` (once)
    FERRY_FAULT_FROM = 1,    ///< every operation with index >= `n`
    FERRY_FAULT_RANDOM = 2,  ///< each operation with probability `probability` (seeded generator)
} FerryFaultMode;

/// What a failing operation returns.
typedef enum {
    /// The operation's own SQLITE_IOERR_* code (IOERR_READ for xRead, IOERR_FSYNC for xSync, ...;
    /// SQLITE_CANTOPEN for xOpen).
    FERRY_FAULT_IOERR = 0,
    FERRY_FAULT_FULL = 1,  ///< SQLITE_FULL (disk full)
    FERRY_FAULT_BUSY = 2,  ///< SQLITE_BUSY (meaningful for locks)
    FERRY_FAULT_CODE = 3,  ///< the rule's `code`, as given
    /// For xOpen only: the file opens, but read-only (SQLite then treats the database as
    /// read-only, as when the file's permissions forbid writing). Other operations fail with
    /// SQLITE_READONLY.
    FERRY_FAULT_READONLY_OPEN = 4,
} FerryFaultFailure;

typedef struct {
    unsigned fileMask;        ///< FERRY_FAULT_FILE_* bits; 0 means any
    unsigned operationMask;   ///< bits (1 << FerryFaultOp); 0 means any
    FerryFaultMode mode;
    int64_t n;                ///< NTH / FROM index
    double probability;       ///< RANDOM
    uint64_t seed;            ///< RANDOM
    FerryFaultFailure failure;
    int code;                 ///< FERRY_FAULT_CODE
    int64_t maxFailures;      ///< stop firing after this many failures; < 0: no limit
} FerryFaultRule;

/// Registers the VFS (idempotent, thread-safe). Returns SQLITE_OK (0) or SQLite's error code.
int ferry_fault_vfs_register(void);

/// The VFS name to pass to sqlite3_open_v2: "ferry-fault".
const char *ferry_fault_vfs_name(void);

/// SQLITE_VERSION_NUMBER of the header this file was compiled with (SQLCipher's or the system's):
/// tests check it is the loaded engine's version.
int ferry_fault_vfs_compiled_version(void);

/// Arms a rule for files whose path contains `pathSubstring` (NULL or "" matches every file).
/// Returns the rule's id (>= 0), or -1 when every rule slot (256) is in use. An id names one
/// arming: once its slot is armed again (slots are reused round-robin, the freed ones last), the
/// old id disarms nothing and its counters read 0.
int ferry_fault_arm(const char *pathSubstring, FerryFaultRule rule);

/// Disarms one rule (its counters stay readable until its slot is armed again). Disarming twice
/// does nothing.
void ferry_fault_disarm(int rule);

/// Disarms every rule whose path substring contains `pathSubstring` (e.g. a test's directory).
void ferry_fault_disarm_matching(const char *pathSubstring);

/// How many operations a rule matched, and how many it failed, since it was armed.
int64_t ferry_fault_rule_matched(int rule);
int64_t ferry_fault_rule_fired(int rule);

/// Copies the path of the file the rule last failed an operation on ("" if none). Returns the
/// path's length.
int ferry_fault_rule_last_path(int rule, char *buffer, int capacity);

/// The operations of kind `op` counted on files whose path contains `pathSubstring` and whose kind
/// is in `fileMask` (0: any), since the process started or the last reset of those paths.
int64_t ferry_fault_count(const char *pathSubstring, unsigned fileMask, FerryFaultOp op);

/// Zeroes the counters of the files whose path contains `pathSubstring`.
void ferry_fault_reset_counts(const char *pathSubstring);

/// Reports every injected failure through sqlite3_log (which Ferry routes to swift-log) when
/// `enabled` is non-zero. Off by default.
void ferry_fault_set_logging(int enabled);

/// The number of operations failed by every rule since the process started.
int64_t ferry_fault_total_fired(void);

#ifdef __cplusplus
}
#endif
#endif
