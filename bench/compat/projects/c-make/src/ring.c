#include <stdlib.h>
#include "ring.h"

int ring_init(struct ring *r, size_t cap)
{
	r->buf = calloc(cap, sizeof *r->buf);
	r->cap = cap;
	r->head = r->len = 0;
	return r->buf ? 0 : -1;
}

void ring_free(struct ring *r)
{
	free(r->buf);
}

int ring_push(struct ring *r, int v)
{
	if (r->len == r->cap)
		return -1;
	r->buf[(r->head + r->len++) % r->cap] = v;
	return 0;
}

int ring_pop(struct ring *r, int *v)
{
	if (!r->len)
		return -1;
	*v = r->buf[r->head];
	r->head = (r->head + 1) % r->cap;
	r->len--;
	return 0;
}
