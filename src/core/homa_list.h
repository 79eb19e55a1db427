/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_list - an intrusive circular doubly-linked list.  A list head is a
 * struct homa_list whose next/prev point to itself when empty; an element
 * embeds a struct homa_list and is "unlinked" when its next/prev point to
 * itself too, so unlinking twice is harmless.
 */
#ifndef HOMA_LIST_H
#define HOMA_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct homa_list {
	struct homa_list *next, *prev;
};

/* homa_list_init - make l an empty head or an unlinked element. */
static inline void homa_list_init(struct homa_list *l)
{
	l->next = l;
	l->prev = l;
}

/* homa_list_empty - true when the head l has no elements (or the element l
 * is unlinked). */
static inline bool homa_list_empty(const struct homa_list *l)
{
	return l->next == l;
}

/* homa_list_insert_before - link the unlinked e just before pos (before the
 * head = at the tail). */
static inline void homa_list_insert_before(struct homa_list *pos,
					   struct homa_list *e)
{
	e->prev = pos->prev;
	e->next = pos;
	pos->prev->next = e;
	pos->prev = e;
}

/* homa_list_add_tail - append the unlinked e to the list head. */
static inline void homa_list_add_tail(struct homa_list *head,
				      struct homa_list *e)
{
	homa_list_insert_before(head, e);
}

/* homa_list_del - unlink e (no-op if already unlinked). */
static inline void homa_list_del(struct homa_list *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	homa_list_init(e);
}

/* homa_container - the struct of type T holding member m at address p. */
#define homa_container(p, T, m) ((T *)((char *)(p) - offsetof(T, m)))

/* homa_list_for_each_safe - iterate a list while elements may be removed. */
#define homa_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#endif /* HOMA_LIST_H */
