#include <assert.h>
#include <stdio.h>
#include "ring.h"

int main(void)
{
	struct ring r;
	int v;
	assert(ring_init(&r, 2) == 0);
	assert(ring_push(&r, 1) == 0 && ring_push(&r, 2) == 0 && ring_push(&r, 3) == -1);
	assert(ring_pop(&r, &v) == 0 && v == 1);
	assert(ring_push(&r, 3) == 0);
	assert(ring_pop(&r, &v) == 0 && v == 2 && ring_pop(&r, &v) == 0 && v == 3);
	ring_free(&r);
	puts("ok");
	return 0;
}
