/*
 * rcu_ptr: a pointer published to RCU readers, as urcu's
 * rcu_assign_pointer / rcu_dereference / rcu_xchg_pointer /
 * rcu_cmpxchg_pointer publish and read it, in a form ThreadSanitizer sees.
 *
 * liburcu is not instrumented: TSan cannot see its barriers, and reports
 * every read of a freshly published object (a config, a stats snapshot, the
 * script cache, the function registry) as a race with the writes that built
 * it.  These are the C11 atomics that order the same way (release
 * publication, acquire read: on x86 the same instructions as urcu's; the
 * compilers make a consume load an acquire one anyway), which TSan
 * understands.  Every RCU-published pointer in the server goes through
 * these, so no publication is left unseen by the TSan pass.
 *
 * Nor can TSan see a grace period: in TSan builds every RCU reader thread
 * "releases" a marker at each quiescent state (rcu_ptr_quiescent) and every
 * call_rcu callback "acquires" it before it frees (rcu_ptr_reclaiming): the
 * happens-before edge that the grace period guarantees.  Both are nothing in
 * other builds.
 */
#ifndef PERCORE_RCU_PTR_H
#define PERCORE_RCU_PTR_H

#include <stdbool.h>

/* publish p at *pp: what built *p is seen by whoever reads the pointer */
#define rcu_ptr_publish(pp, p) __atomic_store_n((pp), (p), __ATOMIC_RELEASE)
/* the published pointer (an RCU reader, inside its read side) */
#define rcu_ptr_read(pp) __atomic_load_n((pp), __ATOMIC_ACQUIRE)
/* publish p, returning the pointer it replaced (a full barrier, as urcu's) */
#define rcu_ptr_swap(pp, p) __atomic_exchange_n((pp), (p), __ATOMIC_SEQ_CST)
/* publish p if *pp is still old; returns what *pp held (== old: published) */
#define rcu_ptr_cmpxchg(pp, old, p)                                                                \
    __extension__({                                                                                \
        __typeof__(*(pp)) rcu_ptr_seen_ = (old);                                                   \
        __atomic_compare_exchange_n((pp), &rcu_ptr_seen_, (p), false, __ATOMIC_SEQ_CST,             \
                                    __ATOMIC_SEQ_CST);                                             \
        rcu_ptr_seen_;                                                                             \
    })

#ifdef PERCORE_SANITIZE_THREAD
void __tsan_release(void *addr);
void __tsan_acquire(void *addr);
extern char rcu_ptr_grace_marker;
static inline void rcu_ptr_quiescent(void) { __tsan_release(&rcu_ptr_grace_marker); }
static inline void rcu_ptr_reclaiming(void) { __tsan_acquire(&rcu_ptr_grace_marker); }
#else
static inline void rcu_ptr_quiescent(void) {}
static inline void rcu_ptr_reclaiming(void) {}
#endif

#endif
