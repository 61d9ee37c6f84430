/* train.c — trains mlrt's MNIST model, an MLP 784 -> H -> 10 (ReLU, softmax), bit for bit
 * reproducibly, and writes it in every weight format mlrt reads.
 *
 *   cc -O2 -ffp-contract=off -std=c11 -o build/train tools/train.c -lm
 *   build/train [--data DIR] [--out DIR] [--hidden H] [--epochs E] [--seed S] [--quiet]
 *               [--min-accuracy A]
 *   build/train --selftest          checks the BinTensors writer against the crate's own example
 *
 * Input, DIR (default build/mnist), as written by tools/mnist-export.mjs:
 *   {train,test}-images.f32 (n x 784 f32 LE in [0, 1]), {train,test}-labels.u8 (n labels 0..9).
 * Output, OUT (default build/models; created if missing), the same weights in each file:
 *   mnist-mlp.f64.bin, mnist-mlp.f32.bin   raw MLP: 3 x i32 (784, H, 10), W1 [784][H], b1 [H],
 *                                          W2 [H][10], b2 [10], as f64 / f32 LE
 *   mnist-mlp.safetensors                  fc1.weight [H][784], fc1.bias, fc2.weight [10][H],
 *                                          fc2.bias (nn.Linear layout), F32, metadata
 *                                          {"activations":"relu,softmax","format":"pt"}
 *   mnist-mlp.aprender.safetensors         the same tensors named "0", "1", "2", "3", no metadata
 *   mnist-mlp.bintensors                   as mnist-mlp.safetensors, in the Rust bintensors format
 *   train-report.json                      {hidden, epochs, seed, test_accuracy, train_seconds}
 *
 * Training: mini-batch SGD with momentum and weight decay, He-uniform init, a linearly
 * decaying learning rate, and every training image warped afresh each epoch by a mild random
 * affine map (scale, rotation, shift of up to 3 px), so that the model copes with the
 * less centred digits people draw in the web demo.
 *
 * Reproducibility: one thread, a seeded PRNG of our own (splitmix64), every sum taken in a
 * fixed order, -ffp-contract=off so that a*b+c never becomes an FMA, and no libm function
 * shapes the weights except sqrt, floor and ldexp, whose results IEEE 754 defines exactly
 * (exp is our own polynomial). The weight files are therefore the same bytes on any machine
 * with IEEE binary32/binary64 arithmetic and FLT_EVAL_METHOD 0. train-report.json differs
 * between runs only in train_seconds.
 *
 * Exit status: 0 ok; 1 bad input or I/O error; 2 usage; 3 test accuracy below A (default 0.95;
 * --min-accuracy 0 for quick runs such as --hidden 32 --epochs 1). On 3 all files are written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#if FLT_EVAL_METHOD != 0
#error "train.c needs FLT_EVAL_METHOD 0 (no excess precision) to be reproducible"
#endif
#ifdef __FAST_MATH__
#error "train.c must not be built with -ffast-math: it reorders sums and breaks reproducibility"
#endif

enum { SIDE = 28, PIXELS = SIDE * SIDE, CLASSES = 10 };

/* Hyperparameters. Changing any of them changes the model. */
#define BATCH 32             /* images per SGD step */
#define LEARNING_RATE 0.05f  /* at the first step; decays linearly to LR_FINAL_FRACTION of it */
#define LR_FINAL_FRACTION 0.02f
#define MOMENTUM 0.9f
#define WEIGHT_DECAY 1e-4f   /* L2, on weights and biases alike */
#define AUG_SCALE 0.1f       /* digit size x [1 - s, 1 + s] */
#define AUG_ANGLE 0.15f      /* rotation in [-a, a] radians (about 8.6 degrees) */
#define AUG_SHIFT 3.0f       /* translation in [-s, s] pixels on each axis */

#define DEFAULT_HIDDEN 512
#define DEFAULT_EPOCHS 30
#define DEFAULT_MIN_ACCURACY 0.95 /* below this on the test split: exit 3 */
#define DEFAULT_SEED 20240601u
#define MAX_HIDDEN 16384
#define MAX_EPOCHS 10000

/* Inner loops over the hidden layer run in blocks of LANES floats: a loop of constant trip
 * count is what gcc -O2 (the "very cheap" vectoriser) turns into SIMD code. */
#define LANES 16

/* ------------------------------------------------------------------------------ errors */

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("train: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) die("out of memory (%zu x %zu bytes)", count, size);
    return p;
}

/* ------------------------------------------------------------------------------ random */

typedef struct rng {
    uint64_t state;
} rng;

/* splitmix64 (Steele, Lea and Flood). */
static uint64_t rng_next(rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi), from 24 random bits. */
static float rng_range(rng *r, float lo, float hi) {
    float unit = (float)(rng_next(r) >> 40) * 0x1p-24f;
    return lo + (hi - lo) * unit;
}

/* Uniform integer in [0, n). */
static uint32_t rng_below(rng *r, uint32_t n) {
    return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* ------------------------------------------------------------------------------ math */

/* e^x for x <= 0, with only +, -, *, floor and ldexp, so that it is the same everywhere. */
static float exp_nonpositive(float x) {
    if (!(x >= -104.0f)) return 0.0f; /* below the smallest float (or NaN) */
    double k = floor((double)x * 1.4426950408889634 + 0.5);
    double r = (double)x - k * 0.6931471805599453; /* |r| <= ln(2)/2 + rounding */
    double p = 1.0;                                /* Taylor series to r^11: error < 1e-14 */
    for (int n = 11; n >= 1; n--) p = 1.0 + p * r / n;
    return (float)ldexp(p, (int)k);
}

/* y[j] += a * x[j] for j < n.  HOT LOOP: most of the training time is spent here. */
static void axpy(float *restrict y, float a, const float *restrict x, int n) {
    int j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) y[j + k] += a * x[j + k];
    for (; j < n; j++) y[j] += a * x[j];
}

/* ------------------------------------------------------------------------------ files */

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) die("cannot stat %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) die("%s is not a regular file", path);
    size_t size = (size_t)st.st_size;
    uint8_t *data = xcalloc(size, 1);
    if (fread(data, 1, size, f) != size)
        die("cannot read %s: %s", path, ferror(f) ? strerror(errno) : "file shrank while reading");
    fclose(f);
    *len = size;
    return data;
}

/* Writes all of data to path, or removes what it wrote and dies naming the file. */
static void write_file(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s: %s", path, strerror(errno));
    bool ok = fwrite(data, 1, len, f) == len;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        remove(path);
        die("cannot write %s: %s", path, strerror(saved));
    }
}

/* mkdir -p */
static void make_dirs(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n >= sizeof path) die("output directory name too long: %s", dir);
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) die("cannot create directory %s: %s", path, strerror(errno));
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) die("%s is not a directory", dir);
}

static void join_path(char *out, size_t cap, const char *dir, const char *name) {
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap) die("path too long: %s/%s", dir, name);
}

/* ------------------------------------------------------------------------------ data */

typedef struct dataset {
    size_t n;
    float *images;   /* [n][PIXELS] */
    uint8_t *labels; /* [n] */
} dataset;

static uint32_t rd_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Loads DIR/<split>-images.f32 and DIR/<split>-labels.u8, checking every value. */
static dataset load_dataset(const char *dir, const char *split) {
    char images_path[4096], labels_path[4096], name[64];
    snprintf(name, sizeof name, "%s-images.f32", split);
    join_path(images_path, sizeof images_path, dir, name);
    snprintf(name, sizeof name, "%s-labels.u8", split);
    join_path(labels_path, sizeof labels_path, dir, name);

    size_t image_bytes, n;
    uint8_t *raw = read_file(images_path, &image_bytes);
    dataset d = {.labels = read_file(labels_path, &n)};
    if (n == 0) die("%s is empty", labels_path);
    if (image_bytes != n * PIXELS * 4)
        die("%s has %zu bytes; the %zu labels in %s need %zu (784 f32 per image)", images_path, image_bytes, n,
            labels_path, n * PIXELS * 4);
    for (size_t i = 0; i < n; i++)
        if (d.labels[i] >= CLASSES) die("%s: label %zu is %u, not 0..9", labels_path, i, d.labels[i]);

    d.n = n;
    d.images = xcalloc(n * PIXELS, sizeof(float));
    for (size_t i = 0; i < n * PIXELS; i++) {
        uint32_t bits = rd_u32le(raw + 4 * i);
        memcpy(&d.images[i], &bits, 4);
        if (!(d.images[i] >= 0.0f && d.images[i] <= 1.0f))
            die("%s: image %zu pixel %zu is %g, outside [0, 1]", images_path, i / PIXELS, i % PIXELS, d.images[i]);
    }
    free(raw);
    return d;
}

/* out = in warped by a random mild affine map about the image centre (scale, rotation,
 * shift), sampled bilinearly with zeros outside. Same random draws -> same image. */
static void augment(const float *in, float *out, rng *r) {
    float scale = rng_range(r, 1.0f - AUG_SCALE, 1.0f + AUG_SCALE);
    float angle = rng_range(r, -AUG_ANGLE, AUG_ANGLE);
    float dx = rng_range(r, -AUG_SHIFT, AUG_SHIFT);
    float dy = rng_range(r, -AUG_SHIFT, AUG_SHIFT);
    /* Taylor sin and cos: within 1e-4 of the true ones for |angle| <= 0.15, and portable. */
    float sin_a = angle - angle * angle * angle / 6.0f;
    float cos_a = 1.0f - angle * angle / 2.0f;
    /* Output pixel (x, y) reads the source at centre + R(-angle) (p - centre - d) / scale. */
    float a = cos_a / scale, b = sin_a / scale;
    const float centre = (SIDE - 1) / 2.0f;
    for (int y = 0; y < SIDE; y++) {
        for (int x = 0; x < SIDE; x++) {
            float u = (float)x - centre - dx, v = (float)y - centre - dy;
            float sx = a * u + b * v + centre, sy = a * v - b * u + centre;
            float fx = floorf(sx), fy = floorf(sy), tx = sx - fx, ty = sy - fy;
            int x0 = (int)fx, y0 = (int)fy;
            float p[2][2]; /* [row][column] of the 4 source pixels around (sx, sy) */
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    int px = x0 + j, py = y0 + i;
                    p[i][j] = (px >= 0 && px < SIDE && py >= 0 && py < SIDE) ? in[py * SIDE + px] : 0.0f;
                }
            float top = p[0][0] + tx * (p[0][1] - p[0][0]);
            float bottom = p[1][0] + tx * (p[1][1] - p[1][0]);
            out[y * SIDE + x] = top + ty * (bottom - top);
        }
    }
}

/* ------------------------------------------------------------------------------ model */

typedef struct mlp {
    int hidden;
    size_t count;   /* parameters: PIXELS*hidden + hidden + hidden*CLASSES + CLASSES */
    float *param;   /* [count]: w1, b1, w2, b2 back to back (the .bin order) */
    float *w1;      /* [PIXELS][hidden] */
    float *b1;      /* [hidden] */
    float *w2;      /* [hidden][CLASSES] */
    float *b2;      /* [CLASSES] */
} mlp;

static mlp mlp_zeros(int hidden) {
    size_t h = (size_t)hidden;
    mlp m = {.hidden = hidden, .count = PIXELS * h + h + h * CLASSES + CLASSES};
    m.param = xcalloc(m.count, sizeof(float));
    m.w1 = m.param;
    m.b1 = m.w1 + PIXELS * h;
    m.w2 = m.b1 + h;
    m.b2 = m.w2 + h * CLASSES;
    return m;
}

/* He-uniform weights (limit sqrt(6 / fan_in)), zero biases. */
static mlp mlp_init(int hidden, rng *r) {
    mlp m = mlp_zeros(hidden);
    float limit1 = sqrtf(6.0f / PIXELS), limit2 = sqrtf(6.0f / (float)hidden);
    for (size_t i = 0; i < (size_t)PIXELS * (size_t)hidden; i++) m.w1[i] = rng_range(r, -limit1, limit1);
    for (size_t i = 0; i < (size_t)hidden * CLASSES; i++) m.w2[i] = rng_range(r, -limit2, limit2);
    return m;
}

/* One image on its way through the network. */
typedef struct sample {
    float x[PIXELS];     /* input */
    int nz[PIXELS];      /* indices of the nonzero pixels of x (most are zero: only they cost) */
    int nz_count;
    float *h;            /* [hidden] hidden activations, after ReLU */
    float *dh;           /* [hidden] d loss / d hidden pre-activation */
    float z[CLASSES];    /* logits */
    float p[CLASSES];    /* softmax(z) */
} sample;

static void set_input(sample *s, const float *pixels) {
    memcpy(s->x, pixels, sizeof s->x);
    s->nz_count = 0;
    for (int i = 0; i < PIXELS; i++)
        if (s->x[i] != 0.0f) s->nz[s->nz_count++] = i;
}

/* h = relu(b1 + x W1), z = b2 + h W2 */
static void forward(const mlp *m, sample *s) {
    int hidden = m->hidden;
    memcpy(s->h, m->b1, (size_t)hidden * sizeof(float));
    for (int k = 0; k < s->nz_count; k++) {
        int i = s->nz[k];
        axpy(s->h, s->x[i], m->w1 + (size_t)i * (size_t)hidden, hidden);
    }
    for (int j = 0; j < hidden; j++) s->h[j] = s->h[j] > 0.0f ? s->h[j] : 0.0f;
    memcpy(s->z, m->b2, sizeof s->z);
    for (int j = 0; j < hidden; j++) {
        if (s->h[j] == 0.0f) continue;
        const float *w2 = m->w2 + (size_t)j * CLASSES;
        for (int o = 0; o < CLASSES; o++) s->z[o] += s->h[j] * w2[o];
    }
}

/* p = softmax(z); returns the cross-entropy -log p[label], which is only reported. */
static double softmax_loss(sample *s, int label) {
    float max = s->z[0];
    for (int o = 1; o < CLASSES; o++) max = s->z[o] > max ? s->z[o] : max;
    float sum = 0.0f;
    for (int o = 0; o < CLASSES; o++) {
        s->p[o] = exp_nonpositive(s->z[o] - max);
        sum += s->p[o];
    }
    for (int o = 0; o < CLASSES; o++) s->p[o] /= sum;
    return log((double)sum) - (double)(s->z[label] - max);
}

/* Adds this image's gradient of the cross-entropy to g (after forward and softmax_loss). */
static void backward(const mlp *m, mlp *g, sample *s, int label) {
    int hidden = m->hidden;
    float dz[CLASSES];
    for (int o = 0; o < CLASSES; o++) {
        dz[o] = s->p[o] - (o == label ? 1.0f : 0.0f);
        g->b2[o] += dz[o];
    }
    for (int j = 0; j < hidden; j++) {
        s->dh[j] = 0.0f;
        if (s->h[j] == 0.0f) continue; /* ReLU inactive: no gradient flows */
        const float *w2 = m->w2 + (size_t)j * CLASSES;
        float *gw2 = g->w2 + (size_t)j * CLASSES;
        for (int o = 0; o < CLASSES; o++) {
            gw2[o] += s->h[j] * dz[o];
            s->dh[j] += w2[o] * dz[o];
        }
    }
    axpy(g->b1, 1.0f, s->dh, hidden);
    for (int k = 0; k < s->nz_count; k++) {
        int i = s->nz[k];
        axpy(g->w1 + (size_t)i * (size_t)hidden, s->x[i], s->dh, hidden);
    }
}

/* v = MOMENTUM v + g / batch + WEIGHT_DECAY w;  w -= lr v;  g = 0 */
static void sgd_step(mlp *m, mlp *v, mlp *g, float lr, int batch) {
    float *restrict w = m->param, *restrict vel = v->param, *restrict grad = g->param;
    float inv_batch = 1.0f / (float)batch;
    for (size_t i = 0; i < m->count; i++) {
        vel[i] = MOMENTUM * vel[i] + grad[i] * inv_batch + WEIGHT_DECAY * w[i];
        w[i] -= lr * vel[i];
        grad[i] = 0.0f;
    }
}

static int predict(const mlp *m, sample *s, const float *pixels) {
    set_input(s, pixels);
    forward(m, s);
    int best = 0;
    for (int o = 1; o < CLASSES; o++)
        if (s->z[o] > s->z[best]) best = o; /* ties: the lowest class */
    return best;
}

static size_t count_correct(const mlp *m, sample *s, const dataset *d) {
    size_t correct = 0;
    for (size_t i = 0; i < d->n; i++) correct += predict(m, s, d->images + i * PIXELS) == d->labels[i];
    return correct;
}

typedef struct trainer {
    mlp model, velocity, grad;
    sample sample;
    uint32_t *order;  /* [train.n] this epoch's permutation of the training set */
    rng rng;
    long step, steps; /* SGD steps taken, and in the whole run (for the learning rate) */
} trainer;

/* One pass over the training set in a fresh random order; returns the mean loss. */
static double train_epoch(trainer *t, const dataset *train) {
    for (uint32_t i = (uint32_t)train->n - 1; i > 0; i--) { /* Fisher-Yates */
        uint32_t j = rng_below(&t->rng, i + 1), tmp = t->order[i];
        t->order[i] = t->order[j];
        t->order[j] = tmp;
    }
    double loss = 0.0;
    float warped[PIXELS];
    for (size_t first = 0; first < train->n; first += BATCH) {
        size_t end = first + BATCH < train->n ? first + BATCH : train->n;
        for (size_t k = first; k < end; k++) {
            uint32_t i = t->order[k];
            augment(train->images + (size_t)i * PIXELS, warped, &t->rng);
            set_input(&t->sample, warped);
            forward(&t->model, &t->sample);
            loss += softmax_loss(&t->sample, train->labels[i]);
            backward(&t->model, &t->grad, &t->sample, train->labels[i]);
        }
        float progress = (float)t->step / (float)t->steps;
        float lr = LEARNING_RATE * (1.0f - (1.0f - LR_FINAL_FRACTION) * progress);
        sgd_step(&t->model, &t->velocity, &t->grad, lr, (int)(end - first));
        t->step++;
    }
    return loss / (double)train->n;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------------ encoders */

typedef struct bytes {
    uint8_t *data; /* [cap] */
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *p, size_t n) {
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) cap *= 2;
        uint8_t *data = realloc(b->data, cap);
        if (!data) die("out of memory (%zu bytes)", cap);
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_u8(bytes *b, uint8_t v) { put(b, &v, 1); }

static void put_le(bytes *b, uint64_t v, int n) { /* the low n bytes of v, little endian */
    uint8_t le[8];
    for (int i = 0; i < n; i++) le[i] = (uint8_t)(v >> (8 * i));
    put(b, le, (size_t)n);
}

static void put_f32(bytes *b, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    put_le(b, bits, 4);
}

static void put_f64(bytes *b, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    put_le(b, bits, 8);
}

static void put_str(bytes *b, const char *s) { put(b, s, strlen(s)); }

static void put_uint(bytes *b, uint64_t v) { /* decimal */
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    put_str(b, text);
}

static void put_json_string(bytes *b, const char *s) {
    put_u8(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put_u8(b, '\\');
            put_u8(b, c);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put_str(b, esc);
        } else {
            put_u8(b, c);
        }
    }
    put_u8(b, '"');
}

/* Shortest "%.*g" text that reads back as exactly v. */
static void put_json_number(bytes *b, double v) {
    char text[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    put_str(b, text);
}

static void pad_spaces_to_8(bytes *b) {
    while (b->len % 8 != 0) put_u8(b, ' ');
}

/* raw .bin MLP: 3 x i32 (inputs, hidden, outputs), then w1, b1, w2, b2 as f64 or f32. */
static bytes encode_bin(const mlp *m, bool f64) {
    bytes b = {0};
    put_le(&b, PIXELS, 4);
    put_le(&b, (uint64_t)m->hidden, 4);
    put_le(&b, CLASSES, 4);
    for (size_t i = 0; i < m->count; i++) {
        if (f64) put_f64(&b, (double)m->param[i]);
        else put_f32(&b, m->param[i]);
    }
    return b;
}

/* A named F32 tensor for the SafeTensors and BinTensors encoders. */
typedef struct tensor {
    const char *name;
    int rank;
    uint64_t shape[3]; /* [rank] */
    const float *data; /* [product of shape], row-major */
} tensor;

typedef struct kv {
    const char *key, *value;
} kv;

static uint64_t tensor_bytes(const tensor *t) {
    uint64_t n = 4;
    for (int d = 0; d < t->rank; d++) n *= t->shape[d];
    return n;
}

/* Copies t[0..n) into out[], sorted by name (names are distinct, so the order is total). */
static void sort_by_name(const tensor *t, size_t n, tensor *out) {
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && strcmp(out[j - 1].name, t[i].name) > 0; j--) out[j] = out[j - 1];
        out[j] = t[i];
    }
}

static void put_tensor_data(bytes *b, const tensor *t) {
    for (uint64_t i = 0; i < tensor_bytes(t) / 4; i++) put_f32(b, t->data[i]);
}

/* SafeTensors: u64 LE header length N, N bytes of compact JSON (padded with spaces to make
 * 8 + N a multiple of 8), then the tensors' data in name order, back to back.
 * meta (meta_n entries, written in the given order) becomes "__metadata__" when meta_n > 0. */
static bytes encode_safetensors(const kv *meta, size_t meta_n, const tensor *tensors, size_t n) {
    tensor sorted[8];
    if (n > 8) die("internal error: too many tensors");
    sort_by_name(tensors, n, sorted);

    bytes h = {0};
    put_u8(&h, '{');
    if (meta_n > 0) {
        put_str(&h, "\"__metadata__\":{");
        for (size_t i = 0; i < meta_n; i++) {
            if (i > 0) put_u8(&h, ',');
            put_json_string(&h, meta[i].key);
            put_u8(&h, ':');
            put_json_string(&h, meta[i].value);
        }
        put_u8(&h, '}');
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 || meta_n > 0) put_u8(&h, ',');
        put_json_string(&h, sorted[i].name);
        put_str(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < sorted[i].rank; d++) {
            if (d > 0) put_u8(&h, ',');
            put_uint(&h, sorted[i].shape[d]);
        }
        put_str(&h, "],\"data_offsets\":[");
        put_uint(&h, offset);
        put_u8(&h, ',');
        offset += tensor_bytes(&sorted[i]);
        put_uint(&h, offset);
        put_str(&h, "]}");
    }
    put_u8(&h, '}');
    pad_spaces_to_8(&h);

    bytes b = {0};
    put_le(&b, h.len, 8);
    put(&b, h.data, h.len);
    for (size_t i = 0; i < n; i++) put_tensor_data(&b, &sorted[i]);
    free(h.data);
    return b;
}

/* bincode 2 "standard" varint: < 251 in one byte, else a tag 251/252/253 + u16/u32/u64 LE. */
static void put_varint(bytes *b, uint64_t v) {
    if (v < 251) {
        put_u8(b, (uint8_t)v);
    } else if (v <= UINT16_MAX) {
        put_u8(b, 251);
        put_le(b, v, 2);
    } else if (v <= UINT32_MAX) {
        put_u8(b, 252);
        put_le(b, v, 4);
    } else {
        put_u8(b, 253);
        put_le(b, v, 8);
    }
}

static void put_bincode_string(bytes *b, const char *s) {
    put_varint(b, strlen(s));
    put_str(b, s);
}

enum { BINTENSORS_F32 = 11 }; /* the Dtype discriminant: BOOL=0, U8, I8, F8_E5M2, F8_E4M3, I16,
                                 U16, F16, BF16, I32, U32, F32=11, F64, I64, U64 */

/* BinTensors (Rust crate `bintensors`): u64 LE metadata length N, N bytes of bincode, then the
 * data. The bincode struct: metadata: Option<HashMap<String, String>> (NULL meta: None),
 * tensors: Vec<{dtype, shape: Vec<usize>, data_offsets: (usize, usize)}>,
 * index_map: HashMap<String, usize>; padded with spaces to a multiple of 8 bytes.
 * The crate orders tensors by dtype descending, then name; all ours are F32, so by name. */
static bytes encode_bintensors(const kv *meta, size_t meta_n, const tensor *tensors, size_t n) {
    tensor sorted[8];
    if (n > 8) die("internal error: too many tensors");
    sort_by_name(tensors, n, sorted);

    bytes h = {0};
    if (meta) {
        put_u8(&h, 1);
        put_varint(&h, meta_n);
        for (size_t i = 0; i < meta_n; i++) {
            put_bincode_string(&h, meta[i].key);
            put_bincode_string(&h, meta[i].value);
        }
    } else {
        put_u8(&h, 0);
    }
    put_varint(&h, n);
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        put_varint(&h, BINTENSORS_F32);
        put_varint(&h, (uint64_t)sorted[i].rank);
        for (int d = 0; d < sorted[i].rank; d++) put_varint(&h, sorted[i].shape[d]);
        put_varint(&h, offset);
        offset += tensor_bytes(&sorted[i]);
        put_varint(&h, offset);
    }
    put_varint(&h, n);
    for (size_t i = 0; i < n; i++) {
        put_bincode_string(&h, sorted[i].name);
        put_varint(&h, i);
    }
    pad_spaces_to_8(&h);

    bytes b = {0};
    put_le(&b, h.len, 8);
    put(&b, h.data, h.len);
    for (size_t i = 0; i < n; i++) put_tensor_data(&b, &sorted[i]);
    free(h.data);
    return b;
}

/* ------------------------------------------------------------------------------ outputs */

/* out = a transposed: a is [rows][cols], out is [cols][rows]. */
static float *transpose(const float *a, size_t rows, size_t cols) {
    float *out = xcalloc(rows * cols, sizeof(float));
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) out[c * rows + r] = a[r * cols + c];
    return out;
}

static void save(const char *dir, const char *name, bytes b) {
    char path[4096];
    join_path(path, sizeof path, dir, name);
    write_file(path, b.data, b.len);
    free(b.data);
}

static void save_model(const mlp *m, const char *dir) {
    uint64_t h = (uint64_t)m->hidden;
    float *fc1_weight = transpose(m->w1, PIXELS, h); /* [hidden][PIXELS] */
    float *fc2_weight = transpose(m->w2, h, CLASSES); /* [CLASSES][hidden] */
    const tensor torch[4] = {
        {"fc1.weight", 2, {h, PIXELS}, fc1_weight},
        {"fc1.bias", 1, {h}, m->b1},
        {"fc2.weight", 2, {CLASSES, h}, fc2_weight},
        {"fc2.bias", 1, {CLASSES}, m->b2},
    };
    const tensor aprender[4] = {
        {"0", 2, {h, PIXELS}, fc1_weight},
        {"1", 1, {h}, m->b1},
        {"2", 2, {CLASSES, h}, fc2_weight},
        {"3", 1, {CLASSES}, m->b2},
    };
    const kv st_meta[] = {{"activations", "relu,softmax"}, {"format", "pt"}}; /* sorted keys */
    const kv bt_meta[] = {{"activations", "relu,softmax"}};

    save(dir, "mnist-mlp.f64.bin", encode_bin(m, true));
    save(dir, "mnist-mlp.f32.bin", encode_bin(m, false));
    save(dir, "mnist-mlp.safetensors", encode_safetensors(st_meta, 2, torch, 4));
    save(dir, "mnist-mlp.aprender.safetensors", encode_safetensors(NULL, 0, aprender, 4));
    save(dir, "mnist-mlp.bintensors", encode_bintensors(bt_meta, 1, torch, 4));
    free(fc1_weight);
    free(fc2_weight);
}

static void save_report(const char *dir, int hidden, int epochs, uint64_t seed, double accuracy, double seconds) {
    bytes b = {0};
    put_str(&b, "{\"hidden\":");
    put_uint(&b, (uint64_t)hidden);
    put_str(&b, ",\"epochs\":");
    put_uint(&b, (uint64_t)epochs);
    put_str(&b, ",\"seed\":");
    put_uint(&b, seed);
    put_str(&b, ",\"test_accuracy\":");
    put_json_number(&b, accuracy);
    put_str(&b, ",\"train_seconds\":");
    put_json_number(&b, round(seconds * 1000.0) / 1000.0);
    put_str(&b, "}\n");
    save(dir, "train-report.json", b);
}

/* ------------------------------------------------------------------------------ selftest */

static bool expect_bytes(const char *what, const bytes *got, const uint8_t *want, size_t want_len) {
    for (size_t i = 0; i < got->len || i < want_len; i++) {
        if (i >= got->len || i >= want_len || got->data[i] != want[i]) {
            fprintf(stderr, "selftest: %s: %zu bytes, expected %zu; first difference at byte %zu\n", what, got->len,
                    want_len, i);
            return false;
        }
    }
    return true;
}

/* The BinTensors writer against the crate's own test example, and varint edge cases. */
static int selftest(void) {
    bool ok = true;
    static const struct {
        uint64_t value;
        uint8_t len, enc[9];
    } varints[] = {
        {0, 1, {0}},
        {250, 1, {250}},
        {251, 3, {251, 251, 0}},
        {65535, 3, {251, 255, 255}},
        {65536, 5, {252, 0, 0, 1, 0}},
        {UINT32_MAX, 5, {252, 255, 255, 255, 255}},
        {(uint64_t)UINT32_MAX + 1, 9, {253, 0, 0, 0, 0, 1, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof varints / sizeof varints[0]; i++) {
        bytes b = {0};
        put_varint(&b, varints[i].value);
        char what[64];
        snprintf(what, sizeof what, "varint %" PRIu64, varints[i].value);
        ok &= expect_bytes(what, &b, varints[i].enc, varints[i].len);
        free(b.data);
    }

    static const float values[6] = {0, 1, 2, 3, 4, 5};
    const tensor attn = {"attn.0", 3, {1, 2, 3}, values};
    uint8_t want[8 + 24 + 24] = {
        24, 0, 0, 0, 0, 0, 0, 0,                 /* metadata length */
        0,                                       /* metadata: None */
        1, 11, 3, 1, 2, 3, 0, 24,                /* one tensor: F32, shape [1, 2, 3], [0, 24) */
        1, 6, 'a', 't', 't', 'n', '.', '0', 0,   /* index_map: {"attn.0": 0} */
        ' ', ' ', ' ', ' ', ' ', ' ',            /* padding */
    };
    for (int i = 0; i < 6; i++) {
        uint32_t bits;
        memcpy(&bits, &values[i], 4);
        for (int k = 0; k < 4; k++) want[32 + 4 * i + k] = (uint8_t)(bits >> (8 * k));
    }
    bytes b = encode_bintensors(NULL, 0, &attn, 1);
    ok &= expect_bytes("bintensors example", &b, want, sizeof want);
    free(b.data);

    fprintf(stderr, "selftest: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/* ------------------------------------------------------------------------------ main */

typedef struct options {
    const char *data, *out;
    int hidden, epochs;
    uint64_t seed;
    double min_accuracy;
    bool quiet, selftest;
} options;

static void usage(const char *problem) {
    fprintf(stderr,
            "train: %s\n"
            "usage: train [--data DIR] [--out DIR] [--hidden H] [--epochs E] [--seed S] [--quiet]\n"
            "             [--min-accuracy A]\n"
            "       train --selftest\n",
            problem);
    exit(2);
}

static uint64_t parse_uint(const char *flag, const char *text, uint64_t min, uint64_t max) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno == ERANGE || v < min || v > max) {
        char problem[160];
        snprintf(problem, sizeof problem, "%s needs a whole number in [%" PRIu64 ", %" PRIu64 "], not '%.60s'",
                 flag, min, max, text);
        usage(problem);
    }
    return v;
}

static double parse_fraction(const char *flag, const char *text) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0.0 && v <= 1.0)) {
        char problem[160];
        snprintf(problem, sizeof problem, "%s needs a number in [0, 1], not '%.100s'", flag, text);
        usage(problem);
    }
    return v;
}

static options parse_args(int argc, char **argv) {
    options o = {"build/mnist", "build/models", DEFAULT_HIDDEN, DEFAULT_EPOCHS, DEFAULT_SEED, DEFAULT_MIN_ACCURACY,
                 false, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quiet") == 0) { o.quiet = true; continue; }
        if (strcmp(a, "--selftest") == 0) { o.selftest = true; continue; }
        bool takes_value = strcmp(a, "--data") == 0 || strcmp(a, "--out") == 0 || strcmp(a, "--hidden") == 0 ||
                           strcmp(a, "--epochs") == 0 || strcmp(a, "--seed") == 0 ||
                           strcmp(a, "--min-accuracy") == 0;
        if (!takes_value) {
            char problem[160];
            snprintf(problem, sizeof problem, "unknown argument '%.100s'", a);
            usage(problem);
        }
        if (i + 1 >= argc) {
            char problem[160];
            snprintf(problem, sizeof problem, "%s needs a value", a);
            usage(problem);
        }
        const char *v = argv[++i];
        if (strcmp(a, "--data") == 0) o.data = v;
        else if (strcmp(a, "--out") == 0) o.out = v;
        else if (strcmp(a, "--hidden") == 0) o.hidden = (int)parse_uint(a, v, 1, MAX_HIDDEN);
        else if (strcmp(a, "--epochs") == 0) o.epochs = (int)parse_uint(a, v, 1, MAX_EPOCHS);
        else if (strcmp(a, "--seed") == 0) o.seed = parse_uint(a, v, 0, UINT64_MAX);
        else o.min_accuracy = parse_fraction(a, v);
    }
    return o;
}

int main(int argc, char **argv) {
    options opt = parse_args(argc, argv);
    if (opt.selftest) return selftest();

    dataset train = load_dataset(opt.data, "train");
    dataset test = load_dataset(opt.data, "test");
    if (train.n > UINT32_MAX) die("too many training images (%zu)", train.n);
    make_dirs(opt.out);

    double start = now_seconds();
    trainer t = {.rng = {opt.seed}};
    t.model = mlp_init(opt.hidden, &t.rng);
    t.velocity = mlp_zeros(opt.hidden);
    t.grad = mlp_zeros(opt.hidden);
    t.sample.h = xcalloc((size_t)opt.hidden, sizeof(float));
    t.sample.dh = xcalloc((size_t)opt.hidden, sizeof(float));
    t.order = xcalloc(train.n, sizeof(uint32_t));
    for (uint32_t i = 0; i < train.n; i++) t.order[i] = i;
    t.steps = (long)opt.epochs * (long)((train.n + BATCH - 1) / BATCH);

    double accuracy = 0.0;
    for (int e = 1; e <= opt.epochs; e++) {
        double loss = train_epoch(&t, &train);
        size_t correct = count_correct(&t.model, &t.sample, &test);
        accuracy = (double)correct / (double)test.n;
        if (!opt.quiet)
            fprintf(stderr, "epoch %3d/%d  train loss %.4f  test accuracy %.2f%% (%zu/%zu)  %.1f s\n", e, opt.epochs,
                    loss, 100.0 * accuracy, correct, test.n, now_seconds() - start);
    }
    double seconds = now_seconds() - start;

    save_model(&t.model, opt.out);
    save_report(opt.out, opt.hidden, opt.epochs, opt.seed, accuracy, seconds);
    if (!opt.quiet)
        fprintf(stderr, "train: hidden %d, %d epochs, seed %" PRIu64 ": test accuracy %.2f%% in %.1f s -> %s\n",
                opt.hidden, opt.epochs, opt.seed, 100.0 * accuracy, seconds, opt.out);
    if (accuracy < opt.min_accuracy) {
        fprintf(stderr, "train: test accuracy %.2f%% is below the required %g%%\n", 100.0 * accuracy,
                100.0 * opt.min_accuracy);
        return 3;
    }
    return 0;
}
