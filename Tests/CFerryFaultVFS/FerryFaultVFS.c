// The fault-injecting VFS: see include/FerryFaultVFS.h.
//
// One engine per build: the SQLCipher trait defines FERRY_FAULT_SQLCIPHER (Package.swift) and this
// file compiles against SQLCipher's header; otherwise against the system's sqlite3.h. The target
// depends on the matching library target, so it links the same engine as Ferry.
#ifdef FERRY_FAULT_SQLCIPHER
#include <sqlcipher/sqlite3.h>
#else
#include <sqlite3.h>
#endif

#include "FerryFaultVFS.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define FERRY_FAULT_VFS_NAME "ferry-fault"
#define MAX_RULES 256
#define MAX_PATH_BYTES 1024
#define BUCKETS 1024
/// `account`'s answer for an xOpen that must open the file read-only (not a SQLite code).
#define OPEN_READONLY (-1)

// MARK: State (everything below `lock`)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/// The counters of one (path, kind of file). Entries are never freed: open files point at them.
typedef struct Entry {
    struct Entry *next;
    char *path;
    unsigned kind;
    int64_t counts[FERRY_FAULT_OP_COUNT];
} Entry;

static Entry *buckets[BUCKETS];

typedef struct {
    int active;
    int generation;  // bumped at each arming: an id names one arming of its slot
    char path[MAX_PATH_BYTES];
    FerryFaultRule rule;
    uint64_t random;
    int64_t matched;
    int64_t fired;
    char lastPath[MAX_PATH_BYTES];
} Rule;

static Rule rules[MAX_RULES];
static int nextSlot = 0;  // slots are handed out round-robin, so a freed one is reused last
static int64_t totalFired = 0;
static int logging = 0;

static unsigned hashPath(const char *path, unsigned kind) {
    unsigned h = 2166136261u ^ kind;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) h = (h ^ *p) * 16777619u;
    return h % BUCKETS;
}

/// The entry of a file (created on first use). Called under `lock`.
static Entry *entryFor(const char *path, unsigned kind) {
    unsigned b = hashPath(path, kind);
    for (Entry *e = buckets[b]; e; e = e->next) {
        if (e->kind == kind && strcmp(e->path, path) == 0) return e;
    }
    Entry *e = calloc(1, sizeof(Entry));
    if (!e) return NULL;
    e->path = strdup(path);
    if (!e->path) { free(e); return NULL; }
    e->kind = kind;
    e->next = buckets[b];
    buckets[b] = e;
    return e;
}

static uint64_t nextRandom(uint64_t *state) {
    // splitmix64: any seed, including 0, gives a good sequence.
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int ioerrCode(FerryFaultOp op) {
    switch (op) {
    case FERRY_FAULT_OP_OPEN: return SQLITE_CANTOPEN;
    case FERRY_FAULT_OP_READ: return SQLITE_IOERR_READ;
    case FERRY_FAULT_OP_WRITE: return SQLITE_IOERR_WRITE;
    case FERRY_FAULT_OP_SYNC: return SQLITE_IOERR_FSYNC;
    case FERRY_FAULT_OP_LOCK: return SQLITE_IOERR_LOCK;
    case FERRY_FAULT_OP_TRUNCATE: return SQLITE_IOERR_TRUNCATE;
    case FERRY_FAULT_OP_FILESIZE: return SQLITE_IOERR_FSTAT;
    case FERRY_FAULT_OP_SHMLOCK: return SQLITE_IOERR_SHMLOCK;
    case FERRY_FAULT_OP_SHMMAP: return SQLITE_IOERR_SHMMAP;
    default: return SQLITE_IOERR;
    }
}

static const char *opName(FerryFaultOp op) {
    static const char *names[FERRY_FAULT_OP_COUNT] = {"open", "read", "write", "sync", "lock", "truncate", "filesize", "shmlock", "shmmap"};
    return op < FERRY_FAULT_OP_COUNT ? names[op] : "?";
}

/// Counts one operation on `entry` (or on `path`/`kind` when the file has no entry yet) and
/// returns the error it must fail with, or SQLITE_OK.
static int account(Entry *entry, const char *path, unsigned kind, FerryFaultOp op) {
    int rc = SQLITE_OK;
    int firedRule = -1;
    pthread_mutex_lock(&lock);
    if (entry) {
        entry->counts[op]++;
        path = entry->path;
        kind = entry->kind;
    }
    for (int i = 0; i < MAX_RULES && rc == SQLITE_OK; i++) {
        Rule *r = &rules[i];
        if (!r->active) continue;
        if (r->rule.fileMask && !(r->rule.fileMask & kind)) continue;
        if (r->rule.operationMask && !(r->rule.operationMask & (1u << op))) continue;
        if (r->path[0] && !strstr(path, r->path)) continue;
        int64_t index = r->matched++;
        if (r->rule.maxFailures >= 0 && r->fired >= r->rule.maxFailures) continue;
        int fire = 0;
        switch (r->rule.mode) {
        case FERRY_FAULT_NTH: fire = index == r->rule.n; break;
        case FERRY_FAULT_FROM: fire = index >= r->rule.n; break;
        case FERRY_FAULT_RANDOM:
            fire = (double)(nextRandom(&r->random) >> 11) * (1.0 / 9007199254740992.0) < r->rule.probability;
            break;
        }
        if (!fire) continue;
        switch (r->rule.failure) {
        case FERRY_FAULT_IOERR: rc = ioerrCode(op); break;
        case FERRY_FAULT_FULL: rc = SQLITE_FULL; break;
        case FERRY_FAULT_BUSY: rc = SQLITE_BUSY; break;
        case FERRY_FAULT_CODE: rc = r->rule.code; break;
        case FERRY_FAULT_READONLY_OPEN: rc = op == FERRY_FAULT_OP_OPEN ? OPEN_READONLY : SQLITE_READONLY; break;
        }
        r->fired++;
        totalFired++;
        strncpy(r->lastPath, path, MAX_PATH_BYTES - 1);
        r->lastPath[MAX_PATH_BYTES - 1] = 0;
        firedRule = i;
    }
    pthread_mutex_unlock(&lock);
    if (firedRule >= 0 && logging) {
        sqlite3_log(rc == OPEN_READONLY ? SQLITE_READONLY : rc, "ferry-fault: injected %s failure on %s (rule %d)", opName(op), path, firedRule);
    }
    return rc;
}

// MARK: Files

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;  // the default VFS's file, allocated right after this struct
    Entry *entry;
} FaultFile;

#define REAL(f) (((FaultFile *)(f))->real)
#define ENTRY(f) (((FaultFile *)(f))->entry)

static int ffClose(sqlite3_file *f) {
    int rc = SQLITE_OK;
    if (REAL(f)->pMethods) rc = REAL(f)->pMethods->xClose(REAL(f));
    return rc;
}

static int ffRead(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_READ);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_IOERR_SHORT_READ) memset(buffer, 0, (size_t)amount);
        return rc;
    }
    return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
}

static int ffWrite(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_WRITE);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
}

static int ffTruncate(sqlite3_file *f, sqlite3_int64 size) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_TRUNCATE);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int ffSync(sqlite3_file *f, int flags) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_SYNC);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int ffFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_FILESIZE);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int ffLock(sqlite3_file *f, int level) {
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_LOCK);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xLock(REAL(f), level);
}

static int ffUnlock(sqlite3_file *f, int level) {
    return REAL(f)->pMethods->xUnlock(REAL(f), level);
}

static int ffCheckReservedLock(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int ffFileControl(sqlite3_file *f, int op, void *arg) {
    int rc = REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
    if (op == SQLITE_FCNTL_VFSNAME && rc == SQLITE_OK && arg) {
        char *inner = *(char **)arg;
        *(char **)arg = sqlite3_mprintf(FERRY_FAULT_VFS_NAME "/%z", inner);
    }
    return rc;
}

static int ffSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }

static int ffDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }

static int ffShmMap(sqlite3_file *f, int page, int pageSize, int extend, void volatile **out) {
    if (REAL(f)->pMethods->iVersion < 2) return SQLITE_IOERR_SHMMAP;
    int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_SHMMAP);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xShmMap(REAL(f), page, pageSize, extend, out);
}

static int ffShmLock(sqlite3_file *f, int offset, int n, int flags) {
    if (REAL(f)->pMethods->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
    // Unlocking never fails (SQLite ignores the result and must be able to let go).
    if (flags & SQLITE_SHM_LOCK) {
        int rc = account(ENTRY(f), "", 0, FERRY_FAULT_OP_SHMLOCK);
        if (rc != SQLITE_OK) return rc;
    }
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

static void ffShmBarrier(sqlite3_file *f) {
    if (REAL(f)->pMethods->iVersion >= 2) REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int ffShmUnmap(sqlite3_file *f, int deleteFlag) {
    if (REAL(f)->pMethods->iVersion < 2) return SQLITE_OK;
    return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag);
}

static int ffFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    if (REAL(f)->pMethods->iVersion < 3) { *out = 0; return SQLITE_OK; }
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}

static int ffUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *p) {
    if (REAL(f)->pMethods->iVersion < 3) return SQLITE_OK;
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, p);
}

static const sqlite3_io_methods faultMethods = {
    3,
    ffClose, ffRead, ffWrite, ffTruncate, ffSync, ffFileSize, ffLock, ffUnlock, ffCheckReservedLock,
    ffFileControl, ffSectorSize, ffDeviceCharacteristics,
    ffShmMap, ffShmLock, ffShmBarrier, ffShmUnmap,
    ffFetch, ffUnfetch,
};

// MARK: The VFS

static sqlite3_vfs *root;  // the default VFS this one wraps
static sqlite3_vfs faultVFS;

static unsigned kindOf(int flags) {
    if (flags & SQLITE_OPEN_MAIN_DB) return FERRY_FAULT_FILE_MAIN_DB;
    if (flags & SQLITE_OPEN_WAL) return FERRY_FAULT_FILE_WAL;
    if (flags & SQLITE_OPEN_MAIN_JOURNAL) return FERRY_FAULT_FILE_JOURNAL;
    return FERRY_FAULT_FILE_OTHER;
}

static int fvOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *f = (FaultFile *)file;
    f->base.pMethods = NULL;
    f->real = (sqlite3_file *)&f[1];
    f->real->pMethods = NULL;
    unsigned kind = kindOf(flags);
    const char *path = name ? name : "";
    pthread_mutex_lock(&lock);
    f->entry = entryFor(path, kind);
    pthread_mutex_unlock(&lock);
    int rc = account(f->entry, path, kind, FERRY_FAULT_OP_OPEN);
    if (rc == OPEN_READONLY) {
        flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
    } else if (rc != SQLITE_OK) {
        return rc;
    }
    rc = root->xOpen(root, name, f->real, flags, outFlags);
    if (f->real->pMethods) f->base.pMethods = &faultMethods;  // xClose is then called even on failure
    return rc;
}

static int fvDelete(sqlite3_vfs *vfs, const char *name, int syncDir) { (void)vfs; return root->xDelete(root, name, syncDir); }
static int fvAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) { (void)vfs; return root->xAccess(root, name, flags, out); }
static int fvFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) { (void)vfs; return root->xFullPathname(root, name, n, out); }
static void *fvDlOpen(sqlite3_vfs *vfs, const char *name) { (void)vfs; return root->xDlOpen(root, name); }
static void fvDlError(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; root->xDlError(root, n, out); }
static void (*fvDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) { (void)vfs; return root->xDlSym(root, handle, symbol); }
static void fvDlClose(sqlite3_vfs *vfs, void *handle) { (void)vfs; root->xDlClose(root, handle); }
static int fvRandomness(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return root->xRandomness(root, n, out); }
static int fvSleep(sqlite3_vfs *vfs, int microseconds) { (void)vfs; return root->xSleep(root, microseconds); }
static int fvCurrentTime(sqlite3_vfs *vfs, double *out) { (void)vfs; return root->xCurrentTime(root, out); }
static int fvGetLastError(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return root->xGetLastError(root, n, out); }
static int fvCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) { (void)vfs; return root->xCurrentTimeInt64(root, out); }
static int fvSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr p) { (void)vfs; return root->xSetSystemCall(root, name, p); }
static sqlite3_syscall_ptr fvGetSystemCall(sqlite3_vfs *vfs, const char *name) { (void)vfs; return root->xGetSystemCall(root, name); }
static const char *fvNextSystemCall(sqlite3_vfs *vfs, const char *name) { (void)vfs; return root->xNextSystemCall(root, name); }

static pthread_once_t registerOnce = PTHREAD_ONCE_INIT;
static int registerResult = SQLITE_OK;

static void registerVFS(void) {
    root = sqlite3_vfs_find(NULL);
    if (!root) { registerResult = SQLITE_ERROR; return; }
    if (root->iVersion < 3) { registerResult = SQLITE_ERROR; return; }
    faultVFS.iVersion = 3;
    faultVFS.szOsFile = (int)sizeof(FaultFile) + root->szOsFile;
    faultVFS.mxPathname = root->mxPathname;
    faultVFS.zName = FERRY_FAULT_VFS_NAME;
    faultVFS.xOpen = fvOpen;
    faultVFS.xDelete = fvDelete;
    faultVFS.xAccess = fvAccess;
    faultVFS.xFullPathname = fvFullPathname;
    faultVFS.xDlOpen = fvDlOpen;
    faultVFS.xDlError = fvDlError;
    faultVFS.xDlSym = fvDlSym;
    faultVFS.xDlClose = fvDlClose;
    faultVFS.xRandomness = fvRandomness;
    faultVFS.xSleep = fvSleep;
    faultVFS.xCurrentTime = fvCurrentTime;
    faultVFS.xGetLastError = fvGetLastError;
    faultVFS.xCurrentTimeInt64 = fvCurrentTimeInt64;
    faultVFS.xSetSystemCall = fvSetSystemCall;
    faultVFS.xGetSystemCall = fvGetSystemCall;
    faultVFS.xNextSystemCall = fvNextSystemCall;
    registerResult = sqlite3_vfs_register(&faultVFS, 0);
}

int ferry_fault_vfs_register(void) {
    pthread_once(&registerOnce, registerVFS);
    return registerResult;
}

const char *ferry_fault_vfs_name(void) { return FERRY_FAULT_VFS_NAME; }

int ferry_fault_vfs_compiled_version(void) { return SQLITE_VERSION_NUMBER; }

// MARK: Control

/// The slot of a rule id, or -1 when the id does not name the slot's current arming. Called
/// under `lock`.
static int slotOf(int id) {
    if (id < 0) return -1;
    int slot = id % MAX_RULES;
    return rules[slot].generation == id / MAX_RULES ? slot : -1;
}

int ferry_fault_arm(const char *pathSubstring, FerryFaultRule rule) {
    int id = -1;
    pthread_mutex_lock(&lock);
    for (int k = 0; k < MAX_RULES; k++) {
        int i = (nextSlot + k) % MAX_RULES;
        if (rules[i].active) continue;
        Rule *r = &rules[i];
        int generation = (r->generation + 1) % (INT32_MAX / MAX_RULES);
        memset(r, 0, sizeof(*r));
        r->generation = generation;
        if (pathSubstring) {
            strncpy(r->path, pathSubstring, MAX_PATH_BYTES - 1);
        }
        r->rule = rule;
        r->random = rule.seed;
        r->active = 1;
        id = generation * MAX_RULES + i;
        nextSlot = (i + 1) % MAX_RULES;
        break;
    }
    pthread_mutex_unlock(&lock);
    return id;
}

void ferry_fault_disarm(int rule) {
    pthread_mutex_lock(&lock);
    int slot = slotOf(rule);
    if (slot >= 0) rules[slot].active = 0;
    pthread_mutex_unlock(&lock);
}

void ferry_fault_disarm_matching(const char *pathSubstring) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_RULES; i++) {
        if (rules[i].active && (!pathSubstring || strstr(rules[i].path, pathSubstring))) rules[i].active = 0;
    }
    pthread_mutex_unlock(&lock);
}

int64_t ferry_fault_rule_matched(int rule) {
    pthread_mutex_lock(&lock);
    int slot = slotOf(rule);
    int64_t value = slot >= 0 ? rules[slot].matched : 0;
    pthread_mutex_unlock(&lock);
    return value;
}

int64_t ferry_fault_rule_fired(int rule) {
    pthread_mutex_lock(&lock);
    int slot = slotOf(rule);
    int64_t value = slot >= 0 ? rules[slot].fired : 0;
    pthread_mutex_unlock(&lock);
    return value;
}

int ferry_fault_rule_last_path(int rule, char *buffer, int capacity) {
    if (capacity <= 0) return 0;
    pthread_mutex_lock(&lock);
    int slot = slotOf(rule);
    strncpy(buffer, slot >= 0 ? rules[slot].lastPath : "", (size_t)capacity - 1);
    buffer[capacity - 1] = 0;
    pthread_mutex_unlock(&lock);
    return (int)strlen(buffer);
}

int64_t ferry_fault_count(const char *pathSubstring, unsigned fileMask, FerryFaultOp op) {
    if (op >= FERRY_FAULT_OP_COUNT) return 0;
    int64_t total = 0;
    pthread_mutex_lock(&lock);
    for (int b = 0; b < BUCKETS; b++) {
        for (Entry *e = buckets[b]; e; e = e->next) {
            if (fileMask && !(fileMask & e->kind)) continue;
            if (pathSubstring && pathSubstring[0] && !strstr(e->path, pathSubstring)) continue;
            total += e->counts[op];
        }
    }
    pthread_mutex_unlock(&lock);
    return total;
}

void ferry_fault_reset_counts(const char *pathSubstring) {
    pthread_mutex_lock(&lock);
    for (int b = 0; b < BUCKETS; b++) {
        for (Entry *e = buckets[b]; e; e = e->next) {
            if (pathSubstring && pathSubstring[0] && !strstr(e->path, pathSubstring)) continue;
            memset(e->counts, 0, sizeof(e->counts));
        }
    }
    pthread_mutex_unlock(&lock);
}

void ferry_fault_set_logging(int enabled) {
    pthread_mutex_lock(&lock);
    logging = enabled;
    pthread_mutex_unlock(&lock);
}

int64_t ferry_fault_total_fired(void) {
    pthread_mutex_lock(&lock);
    int64_t value = totalFired;
    pthread_mutex_unlock(&lock);
    return value;
}
