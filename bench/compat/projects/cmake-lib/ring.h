#ifndef RING_H
#define RING_H
#include <stddef.h>

struct ring {
	int *buf;
	size_t cap, head, len;
};

int ring_init(struct ring *r, size_t cap);
void ring_free(struct ring *r);
int ring_push(struct ring *r, int v);
int ring_pop(struct ring *r, int *v);
#endif
