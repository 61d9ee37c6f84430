/* model/graph_linear.c — the weights of dense and convolution ops: made from the graph's constants
 * and what later ops fused in (a BatchNormalization's scale and shift, a bias, an activation),
 * converted and packed once per model when its plans agree on that recipe (a plan for another
 * length reuses the first plan's packs). */
#include "graph.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OOM() mlrt__plan_fail(pl, MLRT_ERR_OUT_OF_MEMORY, "out of memory")

static void release(mlrt__gpack *h) {
    mlrt__gpacked *w = (mlrt__gpacked *)h;
    free(w->recipe.bn_scale), free(w->recipe.bn_shift);
    free(w->dense.w), free(w->dense.b);
    free(w->cw), free(w->cb);
    free(w);
}

void mlrt__glinear_release(mlrt__glinear *l) {
    free(l->bn_scale), free(l->bn_shift);
    if (l->own && l->pack) release(&l->pack->h);
    l->bn_scale = l->bn_shift = NULL, l->pack = NULL;
}

static bool same_floats(const float *a, const float *b, size_t n) { return (!a && !b) || (a && b && !memcmp(a, b, n * 4)); }

static bool same_recipe(const mlrt__gpacked *p, const mlrt__glinear *l, uint8_t form) {
    const mlrt__glinear *r = &p->recipe;
    return r->conv == l->conv && r->k_in == l->k_in && r->oc == l->oc && r->w == l->w && r->w_trans == l->w_trans &&
           r->alpha == l->alpha && r->beta == l->beta && r->c == l->c && r->c_count == l->c_count && r->act == l->act &&
           p->form == form && same_floats(r->bn_scale, l->bn_scale, l->oc) && same_floats(r->bn_shift, l->bn_shift, l->oc);
}

/* The weights w [oc][k_in] and bias b [oc] (NULL: none) from the recipe, in the order the kernels
 * had them before packing: the file's weights (times alpha), the bias (times beta), then a folded
 * BatchNormalization (w * s, b * s + t). */
static bool materialize(const mlrt__glinear *l, float **w, float **b) {
    size_t k = l->k_in, n = l->oc;
    *w = malloc(n * k * sizeof **w + 4);
    *b = l->c || l->bn_scale ? calloc(n, sizeof **b) : NULL;
    if (!*w || ((l->c || l->bn_scale) && !*b)) { free(*w), free(*b); return false; }
    if (l->conv || (l->w_trans && l->alpha == 1.0f)) memcpy(*w, l->w, n * k * sizeof **w); /* [oc][k_in] already */
    else
        for (size_t o = 0; o < n; o++)
            for (size_t i = 0; i < k; i++) (*w)[o * k + i] = l->alpha * (l->w_trans ? l->w[o * k + i] : l->w[i * n + o]);
    for (size_t o = 0; l->c && o < n; o++) (*b)[o] = l->beta * l->c[l->c_count == 1 ? 0 : o % l->c_count];
    for (size_t o = 0; l->bn_scale && o < n; o++) {
        for (size_t i = 0; i < k; i++) (*w)[o * k + i] *= l->bn_scale[o];
        (*b)[o] = (*b)[o] * l->bn_scale[o] + l->bn_shift[o];
    }
    return true;
}

static mlrt_status pack_conv(mlrt__planner *pl, const mlrt__gop *op, mlrt__gpacked *p, uint32_t groups, float *w, float *b) {
    const mlrt__glinear *l = &p->recipe;
    for (uint64_t i = 0; i < (uint64_t)l->oc * l->k_in; i++) /* a folded BatchNormalization can overflow */
        if (!isfinite(w[i])) return mlrt__fail(pl->err, MLRT_ERR_NON_FINITE, "%s: node %u: a weight is not finite", pl->ir->format,
                                               pl->ir->ops[op->ir].node);
    mlrt__conv c = {{0}, (mlrt__conv_form)p->form, l->k_in, l->act, NULL, NULL};
    c.g.oc = l->oc, c.g.groups = groups;
    if (!(p->cw = malloc(mlrt__conv_weight_floats(&c) * sizeof(float) + 4))) return OOM();
    mlrt__conv_pack(&c, w, p->cw);
    p->cb = b ? b : calloc(l->oc, sizeof(float));
    if (b) return MLRT_OK;
    return p->cb ? MLRT_OK : OOM();
}

mlrt_status mlrt__glinear_pack(mlrt__planner *pl, const mlrt__gop *op, mlrt__glinear *l, uint8_t form, uint32_t groups) {
    mlrt__gpacked *have = (mlrt__gpacked *)pl->packs[op->ir];
    if (have && same_recipe(have, l, form)) {
        l->pack = have, l->own = false;
    } else {
        mlrt__gpacked *p = calloc(1, sizeof *p);
        float *w = NULL, *b = NULL;
        if (!p || !materialize(l, &w, &b)) { free(p); return OOM(); }
        p->h.release = release, p->recipe = *l, p->form = form;
        p->recipe.pack = NULL, p->recipe.bn_scale = p->recipe.bn_shift = NULL;
        if (l->bn_scale && (!(p->recipe.bn_scale = malloc(l->oc * 4)) || !(p->recipe.bn_shift = malloc(l->oc * 4)))) {
            free(w), free(b), release(&p->h);
            return OOM();
        }
        if (l->bn_scale) memcpy(p->recipe.bn_scale, l->bn_scale, l->oc * 4), memcpy(p->recipe.bn_shift, l->bn_shift, l->oc * 4);
        mlrt_status st;
        if (l->conv) {
            st = pack_conv(pl, op, p, groups, w, b);
            if (st) free(b);
        } else {
            char name[48];
            const mlrt__ir_op *o = &pl->ir->ops[op->ir];
            mlrt__format_to(name, sizeof name, "node %u (%.*s)", o->node, MLRT__CUT(o->type, 24));
            mlrt__dense_src s = {0};
            s.name = s.b_name = name;
            s.in = l->k_in, s.out = l->oc;
            s.w = (const uint8_t *)w, s.w_dtype = MLRT_F32;
            s.b = (const uint8_t *)b, s.b_dtype = MLRT_F32;
            s.act = l->act;
            st = mlrt__dense_pack(&s, pl->ir->format, &p->dense, pl->err);
            free(b);
        }
        free(w);
        if (st) { release(&p->h); return st; }
        l->pack = p;
        l->own = have || !l->w_graph; /* the model keeps the first pack of the graph's weights */
        if (!l->own) pl->packs[op->ir] = &p->h;
    }
    pl->g->weight_bytes += l->conv ? (uint64_t)l->oc * (l->k_in + 1) * sizeof(float)
                                   : (uint64_t)l->pack->dense.out_padded * l->k_in * sizeof(float);
    return MLRT_OK;
}

