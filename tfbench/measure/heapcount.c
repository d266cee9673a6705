/* Every byte glibc's malloc hands out, counted as it is handed out and given back: the heap
 * in use now, and its high-water mark since the last reset, exact (no sampling).
 *
 * Preloaded (LD_PRELOAD) into a measuring process; tfbench/measure/heap.py builds and reads
 * it. Each function calls glibc's own (__libc_*), so the allocator is glibc's as before;
 * a block counts its usable size and its chunk header, as mallinfo2's uordblks/hblkhd do.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static int64_t in_use, peak;

static int64_t size_of(void *p) { return (int64_t)(malloc_usable_size(p) + sizeof(size_t)); }

static void add(void *p) {
    if (!p) return;
    int64_t now = __atomic_add_fetch(&in_use, size_of(p), __ATOMIC_RELAXED);
    int64_t high = __atomic_load_n(&peak, __ATOMIC_RELAXED);
    while (now > high &&
           !__atomic_compare_exchange_n(&peak, &high, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void sub(void *p) {
    if (p) __atomic_sub_fetch(&in_use, size_of(p), __ATOMIC_RELAXED);
}

int64_t tfbench_heap_in_use(void) { return __atomic_load_n(&in_use, __ATOMIC_RELAXED); }

int64_t tfbench_heap_peak(void) { return __atomic_load_n(&peak, __ATOMIC_RELAXED); }

void tfbench_heap_reset_peak(void) {
    __atomic_store_n(&peak, __atomic_load_n(&in_use, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    add(p);
    return p;
}

void free(void *p) {
    sub(p);
    __libc_free(p);
}

void *calloc(size_t count, size_t n) {
    void *p = __libc_calloc(count, n);
    add(p);
    return p;
}

void *realloc(void *p, size_t n) {
    int64_t before = p ? size_of(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q || (p && n == 0)) { /* moved, resized, or freed by realloc(p, 0) */
        __atomic_sub_fetch(&in_use, before, __ATOMIC_RELAXED);
        add(q);
    }
    return q;
}

void *reallocarray(void *p, size_t count, size_t n) {
    if (n && count > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, count * n);
}

void *memalign(size_t alignment, size_t n) {
    void *p = __libc_memalign(alignment, n);
    add(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t n) { return memalign(alignment, n); }

int posix_memalign(void **out, size_t alignment, size_t n) {
    if (alignment % sizeof(void *) || (alignment & (alignment - 1)) || !alignment) return EINVAL;
    void *p = memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }

void *pvalloc(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return memalign(page, (n + page - 1) / page * page);
}
