/*
 * call: the after-work for what a handler reported (see call.h), out of
 * line: it runs only when something on the shard wants it.
 */
#include "call.h"

#include "notify.h"

void call_effects_apply(struct shard *self, const struct cmd_effects *fx)
{
    for (int i = 0; i < fx->n; i++) {
        const struct cmd_effect *e = &fx->v[i];
        if (e->kind == CMD_EFFECT_EVENT)
            notify_publish(self, e->type, e->event, e->db, fx->bytes + e->key_off, e->key_len);
    }
}
