/* SPDX-License-Identifier: MIT */
/*
 * OTF2 traces converted to CTF (otf2-to-ctf): the definitions (strings,
 * regions, locations, groups, communicators) and the events (regions
 * entered and left, MPI messages and collectives) on the locations' tracks.
 */
#include "collect/ctf/ctf_int.h"

#define OTF2_UNDEF32 0xFFFFFFFFu
#define OTF2_GROUP_COMM_LOCATIONS 4
#define OTF2_PARADIGM_MPI 4

static const char *const otf2_collectives[] = {
	"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
	"allgatherv", "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce",
	"reduce_scatter", "scan", "exscan", "reduce_scatter_block", "create_handle",
	"destroy_handle", "allocate", "deallocate", "create_handle_and_allocate",
	"destroy_handle_and_deallocate",
};

void tft_ctf_otf2_init(struct otf2 *o)
{
	struct tft_hmap *maps[] = { &o->strings, &o->regions, &o->locations, &o->groups_loc,
				    &o->paradigms, &o->comms, &o->groups, &o->rank_of };

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		tft_hmap_init(maps[i], 2);
}

void tft_ctf_otf2_free(struct otf2 *o)
{
	if (!o)
		return;
	tft_hmap_fini(&o->strings);
	free(o->str);
	tft_hmap_fini(&o->regions);
	tft_hmap_fini(&o->locations);
	tft_hmap_fini(&o->groups_loc);
	tft_hmap_fini(&o->paradigms);
	tft_hmap_fini(&o->comms);
	tft_hmap_fini(&o->groups);
	free(o->defs);
	tft_hmap_fini(&o->rank_of);
	free(o);
}

/* Our string id of OTF2 string ref s, or TFT_NONE. */
static uint32_t otf2_str(const struct otf2 *o, int64_t s)
{
	uint32_t i = map_get(&o->strings, (uint64_t)s, 0);

	return i == TFT_NONE ? TFT_NONE : o->str[i];
}

static int otf2_def(struct ctf *c, struct otf2 *o, struct tft_hmap *m, int64_t self,
		    struct otf2_def d)
{
	if (tft_grow((void **)&o->defs, &o->cdefs, o->ndefs + 1, sizeof(*o->defs)) ||
	    map_put(m, (uint64_t)self, 0, o->ndefs))
		return oom(c);
	o->defs[o->ndefs++] = d;
	return 0;
}

static const struct otf2_def *otf2_get(const struct otf2 *o, const struct tft_hmap *m, int64_t self)
{
	uint32_t i = map_get(m, (uint64_t)self, 0);

	return i == TFT_NONE ? NULL : &o->defs[i];
}

/* A GlobalDef_* event: remember what naming needs. */
static int otf2_definition(struct ctf *c, struct otf2 *o, const char *name, const bt_field *p)
{
	int64_t self = 0, a = 0, b = 0, d = 0;
	const char *s;

	if (strcmp(name, "GlobalDef_String") == 0) {
		if (!member_int(p, "self", &self) || !(s = member_str(p, "stringValue")))
			return 0;
		if (tft_grow((void **)&o->str, &o->cstr, o->nstr + 1, sizeof(*o->str)) ||
		    map_put(&o->strings, (uint64_t)self, 0, o->nstr))
			return oom(c);
		o->str[o->nstr++] = intern_cstr(c, s);
		return c->rc;
	}
	if (!member_int(p, "self", &self) && strcmp(name, "GlobalDef_GroupMember") != 0 &&
	    strcmp(name, "GlobalDef_Paradigm") != 0)
		return 0;
	if (strcmp(name, "GlobalDef_Region") == 0 && member_int(p, "name", &a)) {
		member_int(p, "paradigm", &b);
		return otf2_def(c, o, &o->regions, self, (struct otf2_def){ (uint32_t)a, (uint32_t)b, 0 });
	}
	if (strcmp(name, "GlobalDef_Paradigm") == 0 && member_int(p, "paradigm", &self) &&
	    member_int(p, "name", &a))
		return otf2_def(c, o, &o->paradigms, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_LocationGroup") == 0 && member_int(p, "name", &a))
		return otf2_def(c, o, &o->groups_loc, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_Location") == 0 && member_int(p, "name", &a) &&
	    member_int(p, "locationGroup", &b))
		return otf2_def(c, o, &o->locations, self,
				(struct otf2_def){ (uint32_t)a, (uint32_t)b, 0 });
	if (strcmp(name, "GlobalDef_Comm") == 0 && member_int(p, "name", &a))
		return otf2_def(c, o, &o->comms, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_Group") == 0 && member_int(p, "groupType", &b) &&
	    member_int(p, "paradigm", &d)) {
		member_int(p, "name", &a);
		return otf2_def(c, o, &o->groups, self,
				(struct otf2_def){ (uint32_t)a, (uint32_t)b, (uint32_t)d });
	}
	if (strcmp(name, "GlobalDef_GroupMember") == 0 && member_int(p, "group", &self) &&
	    member_int(p, "rank", &a) && member_int(p, "location", &b)) {
		const struct otf2_def *g = otf2_get(o, &o->groups, self);
		if (g && g->extra == OTF2_GROUP_COMM_LOCATIONS && g->extra2 == OTF2_PARADIGM_MPI &&
		    map_get(&o->rank_of, (uint64_t)b, 0) == TFT_NONE &&
		    map_put(&o->rank_of, (uint64_t)b, 0, (uint32_t)a))
			return oom(c);
	}
	return 0;
}

/* The thread track of OTF2 location loc (in its location group's process). */
static uint32_t otf2_exec(struct ctf *c, uint32_t trace, int64_t loc)
{
	struct otf2 *o = c->traces[trace].otf2;
	const struct otf2_def *l = otf2_get(o, &o->locations, loc);
	int64_t group = l ? l->extra : loc;
	const struct otf2_def *g = otf2_get(o, &o->groups_loc, group);
	uint32_t rank = map_get(&o->rank_of, (uint64_t)loc, 0);
	uint32_t pname = g ? otf2_str(o, g->name) : TFT_NONE;
	uint32_t tname = l ? otf2_str(o, l->name) : TFT_NONE;
	uint32_t proc;
	char buf[48];

	if (pname == TFT_NONE) {
		snprintf(buf, sizeof(buf), "location group %" PRId64, group);
		pname = intern_cstr(c, buf);
	}
	proc = tft_ctf_add_proc(c, trace, PK_OTF2, (uint64_t)group, group, pname,
				rank == TFT_NONE ? -1 : (int32_t)rank);
	if (proc == TFT_NONE)
		return TFT_NONE;
	if (tname == TFT_NONE) {
		snprintf(buf, sizeof(buf), "location %" PRId64, loc);
		tname = intern_cstr(c, buf);
	}
	return tft_ctf_add_exec(c, proc, E_THREAD, (uint64_t)loc, TFT_TRACK_THREAD, tname, loc, 0);
}

int tft_ctf_otf2_event(struct ctf *c, uint32_t trace, const char *name, const bt_field *p,
		       int64_t ts)
{
	struct otf2 *o = c->traces[trace].otf2;
	static const char *const skip_loc[] = { "locationID", NULL };
	int64_t loc, v;
	uint32_t exec, key;

	if (strncmp(name, "GlobalDef", 9) == 0)
		return otf2_definition(c, o, name, p);
	if (!member_int(p, "locationID", &loc))
		loc = -1;
	if ((exec = otf2_exec(c, trace, loc)) == TFT_NONE)
		return c->rc;
	if (strcmp(name, "Event_Enter") == 0 || strcmp(name, "Event_Leave") == 0) {
		const struct otf2_def *r;
		int64_t region = -1;
		uint32_t rname, cat = c->s_empty;
		char buf[32];

		member_int(p, "region", &region);
		key = intern_cstr(c, "Event_Enter");
		if (strcmp(name, "Event_Leave") == 0) {
			int64_t i = tft_ctf_find_open(&c->execs[exec], key, (uint64_t)region + 1);
			c->nargs = 0;
			if (i >= 0)
				return tft_ctf_close_slice(c, exec, (uint32_t)i, ts, 0);
			c->unmatched_ends++;
			tft_ctf_add_struct_args(c, p, skip_loc);
			return tft_ctf_push(c, exec, TFT_EV_INSTANT, ts, 0,
					    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		r = otf2_get(o, &o->regions, region);
		rname = r ? otf2_str(o, r->name) : TFT_NONE;
		if (rname == TFT_NONE) {
			snprintf(buf, sizeof(buf), "region %" PRId64, region);
			rname = intern_cstr(c, buf);
		}
		if (r) {
			const struct otf2_def *pd = otf2_get(o, &o->paradigms, r->extra);
			uint32_t pn = pd ? otf2_str(o, pd->name) : TFT_NONE;
			if (pn != TFT_NONE)
				cat = pn;
		}
		c->nargs = 0;
		return tft_ctf_open_slice(c, exec, ts, key, (uint64_t)region + 1, rname, cat);
	}
	if (strcmp(name, "Event_ProgramBegin") == 0 || strcmp(name, "Event_ProgramEnd") == 0) {
		key = intern_cstr(c, "Event_Program");
		c->nargs = 0;
		if (strcmp(name, "Event_ProgramEnd") == 0) {
			int64_t i = tft_ctf_find_open(&c->execs[exec], key, 0);
			if (member_int(p, "exitStatus", &v) && v != INT64_MIN)
				tft_ctf_add_int_arg(c, "exit_status", v);
			if (i >= 0)
				return tft_ctf_close_slice(c, exec, (uint32_t)i, ts, 0);
			c->unmatched_ends++;
			return tft_ctf_push(c, exec, TFT_EV_INSTANT, ts, 0,
					    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		uint32_t prog = member_int(p, "programName", &v) ? otf2_str(o, v) : TFT_NONE;
		uint32_t pname = c->s_empty;
		if (prog != TFT_NONE) {
			const char *full = tft_writer_str(c->w, prog, NULL);
			pname = intern_cstr(c, base_name(full));
			tft_ctf_add_str_arg(c, "program", prog);
		}
		return tft_ctf_open_slice(c, exec, ts, key, 0, pname, intern_cstr(c, "program"));
	}
	if (strcmp(name, "Event_MpiCollectiveBegin") == 0 ||
	    strcmp(name, "Event_MpiCollectiveEnd") == 0) {
		uint32_t comm = tft_ctf_add_exec(c, c->execs[exec].proc, E_COMM, (uint64_t)loc,
						 TFT_TRACK_COMM, intern_cstr(c, "MPI collectives"), loc, 1);
		if (comm == TFT_NONE)
			return c->rc;
		key = intern_cstr(c, "Event_MpiCollective");
		c->nargs = 0;
		if (strcmp(name, "Event_MpiCollectiveBegin") == 0)
			return tft_ctf_open_slice(c, comm, ts, key, 0, c->s_empty, intern_cstr(c, "mpi_collective"));
		int64_t i = tft_ctf_find_open(&c->execs[comm], key, 0);
		if (member_int(p, "communicator", &v)) {
			const struct otf2_def *cm = otf2_get(o, &o->comms, v);
			uint32_t cn = cm ? otf2_str(o, cm->name) : TFT_NONE;
			if (cn != TFT_NONE && cn != c->s_empty)
				tft_ctf_add_str_arg(c, "communicator", cn);
			else
				tft_ctf_add_int_arg(c, "communicator", v);
		}
		if (member_int(p, "root", &v) && (uint64_t)v != OTF2_UNDEF32)
			tft_ctf_add_int_arg(c, "root", v);
		if (member_int(p, "sizeSent", &v))
			tft_ctf_add_int_arg(c, "bytes_sent", v);
		if (member_int(p, "sizeReceived", &v))
			tft_ctf_add_int_arg(c, "bytes_received", v);
		if (i < 0) {
			c->unmatched_ends++;
			return tft_ctf_push(c, comm, TFT_EV_INSTANT, ts, 0,
					    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		/* the slice is named by the operation, which its end tells */
		if (member_int(p, "collectiveOp", &v) && v >= 0 &&
		    (size_t)v < sizeof(otf2_collectives) / sizeof(otf2_collectives[0]))
			c->execs[comm].st[i].name = intern_cstr(c, otf2_collectives[v]);
		else
			c->execs[comm].st[i].name = intern_cstr(c, "collective");
		return tft_ctf_close_slice(c, comm, (uint32_t)i, ts, 0);
	}
	/* anything else that happened at a location: an instant with its fields */
	static const char *const skip[] = { "locationID", NULL };
	c->nargs = 0;
	tft_ctf_add_struct_args(c, p, skip);
	return tft_ctf_push(c, exec, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name), c->s_empty,
			    0, c->args, c->nargs);
}
