/* pos.h: optional annotations for programs tested with poscheck.
 *
 * Nothing here is required: poscheck controls an unmodified pthread program through
 * LD_PRELOAD'ed libpos.so. These helpers only make intent explicit:
 *
 *   pos_yield()      an explicit scheduling point (sched_yield, which libpos intercepts),
 *                    e.g. inside a hand-written spin loop or between a racy read and write.
 *   POS_SHARED       marks a function whose memory accesses are interesting (the default).
 *   POS_NOT_SHARED   marks a function whose accesses are NOT scheduling points when the
 *                    program is compiled with -fsanitize=thread for poscheck's mem/races
 *                    modes (the compiler emits no __tsan_* calls in it), e.g. thread-local
 *                    computation or logging.
 */
#ifndef POS_H
#define POS_H

#include <sched.h>

static inline void pos_yield(void) { sched_yield(); }

#define POS_SHARED
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define POS_NOT_SHARED __attribute__((no_sanitize("thread")))
#else
#define POS_NOT_SHARED
#endif

#endif /* POS_H */
