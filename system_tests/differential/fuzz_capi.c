/* Differential fuzzer of einrel's C API (einrel.h) against plain loops.
 *
 *   mpiexec.mpich -n RANKS fuzz_capi CASES SEED [verbose]
 *
 * Case i (seeded SEED + i, so `fuzz_capi 1 SEED+i` reruns it alone, at the same number of ranks) draws a
 * small graph of einsums (1-4 vertices over 1-3 inputs, one dtype), cuts every input and output into a
 * random non-overlapping cover of boxes dealt over the ranks (some ranks hold several pieces, some none),
 * runs it through einrel_graph_parse / einrel_program_create / set_input / set_output / execute, executes
 * again on new input values (half of the time from pieces moved to new memory and bound again), and compares
 * every rank's output pieces with a reference evaluator written here in plain loops. Every rank draws the same case, so
 * every rank knows the whole tensors; each checks its own pieces, and the ranks agree on the verdict. One line per
 * failed case (its seed, the first failure, the graph), then "N passed, M failed" on rank 0; exit status 1 if any
 * failed. With `verbose`, rank 0 also prints each case's graph and boxes. */
#include <einrel.h>

#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_DIMS = 3,    /* tensors of rank 0..3 */
  MAX_TENSORS = 7, /* 3 inputs and 4 vertices */
  MAX_PIECES = 8,  /* pieces of one tensor's cover */
  MAX_EXTENT = 9,  /* extents are 1..9 */
  MESSAGE_SIZE = 512,
  TEXT_SIZE = 2048
};

/* ---------------------------------------------------------------------------------------------------------
 * Random numbers: splitmix64, the same sequence on every rank. */

typedef struct {
  uint64_t state;
} Rng;

static uint64_t next_u64(Rng* rng) {
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A uniform integer in [lo, hi]. */
static int uniform(Rng* rng, int lo, int hi) { return lo + (int)(next_u64(rng) % (uint64_t)(hi - lo + 1)); }

static int chance(Rng* rng, int percent) { return uniform(rng, 0, 99) < percent; }

/* ---------------------------------------------------------------------------------------------------------
 * Operations, as the graph language names them (docs/graph-format.md). */

typedef enum { JOIN_MUL, JOIN_ADD, JOIN_SUB, JOIN_MAX, JOIN_MIN, JOIN_SQDIFF, JOIN_ABSDIFF, JOIN_COUNT } Join;
typedef enum { AGG_SUM, AGG_MAX, AGG_MIN, AGG_COUNT } Agg;
typedef enum { MAP_IDENTITY, MAP_NEG, MAP_ABS, MAP_RELU, MAP_SQUARE, MAP_SCALE, MAP_TANH, MAP_COUNT } Map;

static const char* const join_names[JOIN_COUNT] = {"mul", "add", "sub", "max", "min", "sqdiff", "absdiff"};
static const char* const agg_names[AGG_COUNT] = {"sum", "max", "min"};
static const char* const map_names[MAP_COUNT] = {"identity", "neg", "abs", "relu", "square", "scale", "tanh"};
/* scale(c) constants as written in the graph text; 0.1 and -0.3 are not exact in binary. */
static const char* const scale_constants[] = {"0.5", "-2", "3", "0.125", "-0.75", "0.1", "-0.3"};

/* Equations the generator instantiates. Binary: matmuls and their transposed forms, element-wise joins,
 * broadcasts, outer and inner products, 3-d contractions, 0-d operands. Unary: transposes, reductions (to 0-d
 * too), maps. */
static const char* const binary_equations[] = {"ij,jk->ik",    "ij,kj->ik",  "ji,jk->ik", "ij,ij->ij", "ij,ji->ij",
                                               "ij,j->ij",     "ij,i->ij",   "i,i->",     "i,j->ij",   "ijk,kl->ijl",
                                               "ijk,ijk->ijk", "ijk,ik->ij", ",ij->ij",   "ij,->ij"};
static const char* const unary_equations[] = {"ij->ji", "ij->i",    "ij->j",   "ij->",   "ij->ij", "i->i",
                                              "i->",    "ijk->ikj", "ijk->ij", "ijk->k", "->"};
enum {
  BINARY_EQUATIONS = sizeof binary_equations / sizeof *binary_equations,
  UNARY_EQUATIONS = sizeof unary_equations / sizeof *unary_equations
};

/* ---------------------------------------------------------------------------------------------------------
 * Equations: operand labels and output labels, explicit ("ij,jk->ik") or implicit ("ij,jk": the labels that
 * occur once, in ASCII order). */

typedef struct {
  int operands;
  char labels[2][MAX_DIMS + 1];
  char output[MAX_DIMS + 1];
} Equation;

/* The implicit output of `eq`'s operands: labels seen exactly once, sorted. */
static void implicit_output(Equation* eq) {
  int seen[128] = {0};
  for (int k = 0; k < eq->operands; ++k)
    for (const char* c = eq->labels[k]; *c; ++c) ++seen[(unsigned char)*c];
  int n = 0;
  for (int c = 0; c < 128; ++c)
    if (seen[c] == 1) eq->output[n++] = (char)c;
  eq->output[n] = '\0';
}

/* Parses the equations this file writes (at most two operands of at most MAX_DIMS labels). */
static Equation parse_equation(const char* text) {
  Equation eq;
  memset(&eq, 0, sizeof eq);
  const char* arrow = strstr(text, "->");
  const size_t lhs = arrow ? (size_t)(arrow - text) : strlen(text);
  int k = 0, n = 0;
  for (size_t i = 0; i < lhs; ++i) {
    if (text[i] == ',') {
      eq.labels[k++][n] = '\0';
      n = 0;
    } else {
      eq.labels[k][n++] = text[i];
    }
  }
  eq.labels[k][n] = '\0';
  eq.operands = k + 1;
  if (arrow)
    strcpy(eq.output, arrow + 2);
  else
    implicit_output(&eq);
  return eq;
}

/* ---------------------------------------------------------------------------------------------------------
 * A random graph: inputs A, B, C and einsum vertices V1..V4, one dtype. */

typedef struct {
  char name[4];
  int rank;
  int64_t dims[MAX_DIMS];
  int is_input, is_output, consumers;
  /* a vertex: */
  char equation[32]; /* as written in the text (explicit or implicit) */
  int operands, operand[2];
  Join join;
  Agg agg;
  Map map;
  const char* constant; /* scale(c) */
} Tensor;

typedef struct {
  Tensor tensor[MAX_TENSORS];
  int count, inputs, max_inputs;
  einrel_dtype dtype;
  char text[TEXT_SIZE];
} Graph;

static int64_t volume(const Tensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; ++d) n *= t->dims[d];
  return n;
}

/* Whether tensor t can be an operand with `labels` given the extents fixed so far (0: not yet). */
static int fits(const Tensor* t, const char* labels, const int64_t extent[128]) {
  if (t->rank != (int)strlen(labels)) return 0;
  for (int d = 0; d < t->rank; ++d)
    if (extent[(unsigned char)labels[d]] && extent[(unsigned char)labels[d]] != t->dims[d]) return 0;
  return 1;
}

static void add_input(Graph* g, const char* labels, const int64_t extent[128]) {
  Tensor* t = &g->tensor[g->count++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%c", 'A' + g->inputs++);
  t->is_input = 1;
  t->rank = (int)strlen(labels);
  for (int d = 0; d < t->rank; ++d) t->dims[d] = extent[(unsigned char)labels[d]];
}

/* Picks the operands of `eq` among the graph's tensors, adding new inputs while the graph may have more (a
 * new input may be both operands); fills operand[] and the label extents. Where no tensor fits an operand,
 * returns 0 with the graph as it was. */
static int pick_operands(Rng* rng, Graph* g, const Equation* eq, int operand[2], int64_t extent[128]) {
  const int count = g->count, inputs = g->inputs;
  for (int k = 0; k < eq->operands; ++k) {
    int candidates[MAX_TENSORS], n = 0;
    for (int t = 0; t < g->count; ++t)
      if (fits(&g->tensor[t], eq->labels[k], extent)) candidates[n++] = t;
    const int can_create = g->inputs < g->max_inputs;
    if (n > 0 && (!can_create || chance(rng, 70))) {
      operand[k] = candidates[uniform(rng, 0, n - 1)];
    } else if (can_create) {
      for (const char* c = eq->labels[k]; *c; ++c)
        if (!extent[(unsigned char)*c]) extent[(unsigned char)*c] = uniform(rng, 1, MAX_EXTENT);
      add_input(g, eq->labels[k], extent);
      operand[k] = g->count - 1;
    } else {
      g->count = count;
      g->inputs = inputs;
      return 0;
    }
    const Tensor* t = &g->tensor[operand[k]];
    for (int d = 0; d < t->rank; ++d) extent[(unsigned char)eq->labels[k][d]] = t->dims[d];
  }
  return 1;
}

/* Adds one vertex of a random equation (binary ones more often: they fit the graph less often), or returns 0
 * if its operands do not fit this graph. */
static int add_vertex(Rng* rng, Graph* g, int number) {
  const char* text = chance(rng, 70) ? binary_equations[uniform(rng, 0, BINARY_EQUATIONS - 1)]
                                     : unary_equations[uniform(rng, 0, UNARY_EQUATIONS - 1)];
  const Equation eq = parse_equation(text);
  int64_t extent[128] = {0};
  int operand[2];
  if (!pick_operands(rng, g, &eq, operand, extent)) return 0;

  Tensor* v = &g->tensor[g->count++];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "V%c", (char)('0' + number));
  v->rank = (int)strlen(eq.output);
  for (int d = 0; d < v->rank; ++d) v->dims[d] = extent[(unsigned char)eq.output[d]];
  v->operands = eq.operands;
  for (int k = 0; k < eq.operands; ++k) {
    v->operand[k] = operand[k];
    ++g->tensor[operand[k]].consumers;
  }
  /* The implicit form where it means the same. */
  Equation implicit = eq;
  implicit_output(&implicit);
  const size_t lhs = (size_t)(strstr(text, "->") - text);
  if (strcmp(implicit.output, eq.output) == 0 && chance(rng, 25))
    snprintf(v->equation, sizeof v->equation, "%.*s", (int)lhs, text);
  else
    snprintf(v->equation, sizeof v->equation, "%s", text);
  v->join = eq.operands == 2 && chance(rng, 60) ? (Join)uniform(rng, 1, JOIN_COUNT - 1) : JOIN_MUL;
  v->agg = chance(rng, 50) ? (Agg)uniform(rng, 1, AGG_COUNT - 1) : AGG_SUM;
  v->map = chance(rng, 50) ? (Map)uniform(rng, 1, MAP_COUNT - 1) : MAP_IDENTITY;
  v->constant = scale_constants[uniform(rng, 0, (int)(sizeof scale_constants / sizeof *scale_constants) - 1)];
  return 1;
}

/* The graph's text: keywords where they are not the defaults, and now and then where they are. */
static void write_text(Rng* rng, Graph* g) {
  const char* dtype = g->dtype == EINREL_F32 ? "f32" : "f64";
  size_t n = 0;
#define APPEND(...) n += (size_t)snprintf(g->text + n, sizeof g->text - n, __VA_ARGS__)
  for (int i = 0; i < g->count; ++i) {
    const Tensor* t = &g->tensor[i];
    if (t->is_input) {
      APPEND("input %s %s[", t->name, dtype);
      for (int d = 0; d < t->rank; ++d) APPEND("%s%lld", d ? "," : "", (long long)t->dims[d]);
      APPEND("]\n");
      continue;
    }
    APPEND("%s = einsum(\"%s\"", t->name, t->equation);
    for (int k = 0; k < t->operands; ++k) APPEND(", %s", g->tensor[t->operand[k]].name);
    if (t->operands == 2 && (t->join != JOIN_MUL || chance(rng, 20))) APPEND(", join=%s", join_names[t->join]);
    if (t->agg != AGG_SUM || chance(rng, 20)) APPEND(", agg=%s", agg_names[t->agg]);
    if (t->map == MAP_SCALE)
      APPEND(", map=scale(%s)", t->constant);
    else if (t->map != MAP_IDENTITY || chance(rng, 20))
      APPEND(", map=%s", map_names[t->map]);
    APPEND(")\n");
  }
  const char* separator = "output ";
  for (int i = 0; i < g->count; ++i)
    if (g->tensor[i].is_output) {
      APPEND("%s%s", separator, g->tensor[i].name);
      separator = ", ";
    }
  APPEND("\n");
#undef APPEND
}

static void random_graph(Rng* rng, Graph* g) {
  memset(g, 0, sizeof *g);
  g->dtype = chance(rng, 50) ? EINREL_F32 : EINREL_F64;
  g->max_inputs = uniform(rng, 1, 3);
  const int vertices = uniform(rng, 1, 4);
  for (int made = 0, tries = 0; made < vertices && tries < 100; ++tries)
    if (add_vertex(rng, g, made + 1)) ++made;
  /* Every vertex nobody reads is an output; the others now and then. */
  for (int i = 0; i < g->count; ++i)
    if (!g->tensor[i].is_input) g->tensor[i].is_output = g->tensor[i].consumers == 0 || chance(rng, 30);
  write_text(rng, g);
}

/* ---------------------------------------------------------------------------------------------------------
 * The reference: every einsum in plain loops over all label values, in long double, with a running bound
 * on the error an implementation in the graph's dtype may make (first order in the unit roundoff `eps`,
 * plus the products of errors). */

typedef struct {
  long double* value;
  double* error;
} Values;

typedef struct {
  long double value;
  double error;
} Term;

static Term join_terms(Join join, Term x, Term y, double eps) {
  const long double a = x.value, b = y.value;
  const double ea = x.error, eb = y.error;
  Term t;
  switch (join) {
    case JOIN_MUL:
      t.value = a * b;
      t.error = fabsl(b) * ea + fabsl(a) * eb + ea * eb + eps * fabsl(t.value);
      return t;
    case JOIN_ADD:
    case JOIN_SUB:
      t.value = join == JOIN_ADD ? a + b : a - b;
      t.error = ea + eb + eps * fabsl(t.value);
      return t;
    case JOIN_MAX:
    case JOIN_MIN:
      t.value = join == JOIN_MAX ? (a > b ? a : b) : (a < b ? a : b);
      t.error = ea > eb ? ea : eb;
      return t;
    case JOIN_SQDIFF: {
      const long double d = a - b;
      const double ed = ea + eb + eps * fabsl(d);
      t.value = d * d;
      t.error = 2 * fabsl(d) * ed + ed * ed + eps * t.value;
      return t;
    }
    default: /* JOIN_ABSDIFF */
      t.value = fabsl(a - b);
      t.error = ea + eb + eps * t.value;
      return t;
  }
}

static Term map_term(Map map, const char* constant, Term x, double eps) {
  const long double v = x.value;
  Term t = x;
  switch (map) {
    case MAP_IDENTITY:
      return t;
    case MAP_NEG:
      t.value = -v;
      return t;
    case MAP_ABS:
      t.value = fabsl(v);
      return t;
    case MAP_RELU:
      t.value = v > 0 ? v : 0;
      return t;
    case MAP_SQUARE:
      t.value = v * v;
      t.error = 2 * fabsl(v) * x.error + x.error * x.error + eps * t.value;
      return t;
    case MAP_SCALE: { /* the constant itself may be rounded to the dtype: a second eps */
      const long double c = strtold(constant, NULL);
      t.value = c * v;
      t.error = fabsl(c) * x.error + 2 * eps * fabsl(t.value);
      return t;
    }
    default: /* MAP_TANH: |tanh'| <= 1, and a few ulps for the function itself */
      t.value = tanhl(v);
      t.error = x.error + 4 * eps * fabsl(t.value);
      return t;
  }
}

/* The C-order offset in tensor t of the label values `at` (indexed by label). */
static int64_t offset_of(const Tensor* t, const char* labels, const int64_t at[128]) {
  int64_t offset = 0;
  for (int d = 0; d < t->rank; ++d) offset = offset * t->dims[d] + at[(unsigned char)labels[d]];
  return offset;
}

/* Evaluates vertex v of g from its operands' values into values[v]. */
static void evaluate_vertex(const Graph* g, int v, Values* values, double eps) {
  const Tensor* z = &g->tensor[v];
  const Equation eq = parse_equation(z->equation);
  /* The distinct labels and their extents. */
  char labels[2 * MAX_DIMS + 1] = {0};
  int64_t extent[128] = {0};
  int n = 0;
  for (int k = 0; k < eq.operands; ++k)
    for (int d = 0; eq.labels[k][d]; ++d) {
      const unsigned char c = (unsigned char)eq.labels[k][d];
      if (!extent[c]) labels[n++] = (char)c;
      extent[c] = g->tensor[z->operand[k]].dims[d];
    }
  const int64_t size = volume(z);
  int64_t* terms = calloc((size_t)size, sizeof *terms);
  double* magnitude = calloc((size_t)size, sizeof *magnitude); /* sum of |term| */
  long double* value = values[v].value;
  double* error = values[v].error;
  int64_t at[128] = {0};
  for (;;) {
    Term x[2];
    for (int k = 0; k < eq.operands; ++k) {
      const int o = z->operand[k];
      const int64_t i = offset_of(&g->tensor[o], eq.labels[k], at);
      x[k].value = values[o].value[i];
      x[k].error = values[o].error[i];
    }
    const Term joined = eq.operands == 2 ? join_terms(z->join, x[0], x[1], eps) : x[0];
    const Term t = map_term(z->map, z->constant, joined, eps);
    const int64_t out = offset_of(z, eq.output, at);
    const int first = terms[out]++ == 0;
    if (z->agg == AGG_SUM) {
      value[out] = first ? t.value : value[out] + t.value;
      error[out] = first ? t.error : error[out] + t.error;
      magnitude[out] += (double)fabsl(t.value);
    } else if (first || (z->agg == AGG_MAX ? t.value > value[out] : t.value < value[out])) {
      value[out] = t.value;
    }
    if (z->agg != AGG_SUM && (first || t.error > error[out])) error[out] = t.error;
    /* The next label values (odometer, the last label fastest). */
    int d = n - 1;
    while (d >= 0 && ++at[(unsigned char)labels[d]] == extent[(unsigned char)labels[d]])
      at[(unsigned char)labels[d--]] = 0;
    if (d < 0) break;
  }
  /* Any order of summing K terms errs by at most (K - 1) eps sum|term|; the result is rounded once more. */
  for (int64_t i = 0; i < size; ++i) {
    if (z->agg == AGG_SUM) error[i] += (double)(terms[i] - 1) * eps * 1.01 * magnitude[i];
    error[i] += eps * (double)fabsl(value[i]);
  }
  free(terms);
  free(magnitude);
}

/* ---------------------------------------------------------------------------------------------------------
 * Covers: a tensor cut into boxes by random guillotine cuts, each box dealt to a random rank. */

typedef struct {
  int64_t lo[MAX_DIMS], hi[MAX_DIMS];
  int owner;
} Box;

typedef struct {
  Box box[MAX_PIECES];
  int count;
} Cover;

static int64_t box_volume(const Box* b, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= b->hi[d] - b->lo[d];
  return n;
}

/* Cuts box `i` of the cover along a random dimension of extent > 1; 0 if it has none. */
static int cut(Rng* rng, Cover* c, int i, int rank) {
  int dims[MAX_DIMS], n = 0;
  for (int d = 0; d < rank; ++d)
    if (c->box[i].hi[d] - c->box[i].lo[d] > 1) dims[n++] = d;
  if (n == 0) return 0;
  const int d = dims[uniform(rng, 0, n - 1)];
  Box* left = &c->box[i];
  Box* right = &c->box[c->count++];
  *right = *left;
  left->hi[d] = right->lo[d] = uniform(rng, (int)left->lo[d] + 1, (int)left->hi[d] - 1);
  return 1;
}

static void random_cover(Rng* rng, const Tensor* t, int ranks, Cover* c) {
  memset(c, 0, sizeof *c);
  c->count = 1;
  for (int d = 0; d < t->rank; ++d) c->box[0].hi[d] = t->dims[d];
  const int cuts = uniform(rng, 0, MAX_PIECES - 1);
  for (int k = 0; k < cuts; ++k) {
    const int start = uniform(rng, 0, c->count - 1);
    for (int j = 0; j < c->count && !cut(rng, c, (start + j) % c->count, t->rank); ++j) {
    }
  }
  for (int i = 0; i < c->count; ++i) c->box[i].owner = uniform(rng, 0, ranks - 1);
}

/* The offset in the whole tensor of element e (C order) of box b. */
static int64_t whole_offset(const Tensor* t, const Box* b, int64_t e) {
  int64_t offset = 0, stride = 1;
  for (int d = t->rank - 1; d >= 0; --d) {
    const int64_t extent = b->hi[d] - b->lo[d];
    offset += (b->lo[d] + e % extent) * stride;
    e /= extent;
    stride *= t->dims[d];
  }
  return offset;
}

/* ---------------------------------------------------------------------------------------------------------
 * One case on this rank. */

typedef struct {
  int count;
  int64_t lo[MAX_PIECES * MAX_DIMS], hi[MAX_PIECES * MAX_DIMS];
  void* data[MAX_PIECES];
  int box[MAX_PIECES]; /* the cover's box each piece is */
} Pieces;

typedef struct {
  int rank, ranks, verbose;
  uint64_t seed;
  Graph graph;
  Cover cover[MAX_TENSORS];
  Pieces pieces[MAX_TENSORS];
  Values values[MAX_TENSORS];
  double eps;
  int failed;
  char message[MESSAGE_SIZE]; /* this rank's first failure */
} Case;

static void fail(Case* c, const char* format, ...) {
  if (c->failed++) return;
  va_list args;
  va_start(args, format);
  vsnprintf(c->message, sizeof c->message, format, args);
  va_end(args);
}

/* The failure of an einrel call, with its message (and whether there was one). */
static void fail_call(Case* c, const char* call, einrel_status status) {
  const char* message = einrel_last_error();
  fail(c, "%s returned %d: %s", call, (int)status, *message ? message : "(no message: einrel_last_error() is empty)");
}

/* Whether a collective call gave the same status on every rank; a failure on this rank is recorded. */
static int collective_ok(Case* c, const char* call, einrel_status status) {
  int mine[2] = {(int)status, -(int)status}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (all[0] != -all[1])
    fail(c, "%s returned different statuses on different ranks (%d and %d)", call, -all[1], all[0]);
  if (status != EINREL_OK) fail_call(c, call, status);
  return all[0] == EINREL_OK;
}

static size_t element_size(const Case* c) { return c->graph.dtype == EINREL_F32 ? sizeof(float) : sizeof(double); }

/* This rank's pieces of tensor t if it is an input or output (buffers of their boxes' sizes). */
static void make_pieces(Case* c, int t) {
  const Tensor* tensor = &c->graph.tensor[t];
  const Cover* cover = &c->cover[t];
  Pieces* p = &c->pieces[t];
  memset(p, 0, sizeof *p);
  if (!tensor->is_input && !tensor->is_output) return;
  for (int i = 0; i < cover->count; ++i) {
    if (cover->box[i].owner != c->rank) continue;
    for (int d = 0; d < tensor->rank; ++d) {
      p->lo[p->count * tensor->rank + d] = cover->box[i].lo[d];
      p->hi[p->count * tensor->rank + d] = cover->box[i].hi[d];
    }
    p->data[p->count] = malloc((size_t)box_volume(&cover->box[i], tensor->rank) * element_size(c));
    p->box[p->count++] = i;
  }
}

/* Draws new values of every input; copies this rank's pieces of them. f32 values are f32 numbers. */
static void draw_inputs(Case* c, Rng* rng) {
  const int small_integers = chance(rng, 15); /* ties for max/min and exact arithmetic */
  for (int t = 0; t < c->graph.count; ++t) {
    const Tensor* tensor = &c->graph.tensor[t];
    if (!tensor->is_input) continue;
    for (int64_t i = 0; i < volume(tensor); ++i) {
      const double x = small_integers ? uniform(rng, -2, 2) : (double)(next_u64(rng) >> 11) * 0x1p-52 - 1.0;
      c->values[t].value[i] = c->graph.dtype == EINREL_F32 ? (long double)(float)x : (long double)x;
      c->values[t].error[i] = 0;
    }
    const Pieces* p = &c->pieces[t];
    for (int k = 0; k < p->count; ++k) {
      const Box* b = &c->cover[t].box[p->box[k]];
      for (int64_t e = 0; e < box_volume(b, tensor->rank); ++e) {
        const long double x = c->values[t].value[whole_offset(tensor, b, e)];
        if (c->graph.dtype == EINREL_F32)
          ((float*)p->data[k])[e] = (float)x;
        else
          ((double*)p->data[k])[e] = (double)x;
      }
    }
  }
}

/* Fills this rank's output pieces with NaN, so that an element einrel does not write is seen. */
static void poison_outputs(Case* c) {
  for (int t = 0; t < c->graph.count; ++t) {
    const Tensor* tensor = &c->graph.tensor[t];
    if (!tensor->is_output) continue;
    const Pieces* p = &c->pieces[t];
    for (int k = 0; k < p->count; ++k)
      for (int64_t e = 0; e < box_volume(&c->cover[t].box[p->box[k]], tensor->rank); ++e) {
        if (c->graph.dtype == EINREL_F32)
          ((float*)p->data[k])[e] = NAN;
        else
          ((double*)p->data[k])[e] = NAN;
      }
  }
}

/* Compares this rank's output pieces with the reference: |einrel - reference| <= 2 * bound (the bound holds
 * for einrel's rounding and, twice over, for the reference's own, which is in long double). */
static void check_outputs(Case* c, int execution) {
  const double tiny = c->graph.dtype == EINREL_F32 ? FLT_MIN : DBL_MIN;
  for (int t = 0; t < c->graph.count; ++t) {
    const Tensor* tensor = &c->graph.tensor[t];
    if (!tensor->is_output) continue;
    const Pieces* p = &c->pieces[t];
    for (int k = 0; k < p->count; ++k) {
      const Box* b = &c->cover[t].box[p->box[k]];
      for (int64_t e = 0; e < box_volume(b, tensor->rank); ++e) {
        const int64_t i = whole_offset(tensor, b, e);
        const long double got = c->graph.dtype == EINREL_F32 ? ((float*)p->data[k])[e] : ((double*)p->data[k])[e];
        const long double want = c->values[t].value[i];
        const double tolerance = 2 * c->values[t].error[i] + tiny;
        if (!(fabsl(got - want) <= tolerance)) {
          fail(c,
               "execution %d: output %s element %lld (of the whole tensor) in piece %d: einrel %.9Lg, reference "
               "%.9Lg, tolerance %.3g",
               execution, tensor->name, (long long)i, p->box[k], got, want, tolerance);
          return;
        }
      }
    }
  }
}

/* Binds this rank's pieces of every input and output; a rank without pieces passes a count of 0 (with null
 * boxes and data half of the time). */
static int bind_all(Case* c, einrel_program program, Rng* rng) {
  for (int t = 0; t < c->graph.count; ++t) {
    const Tensor* tensor = &c->graph.tensor[t];
    if (!tensor->is_input && !tensor->is_output) continue;
    Pieces* p = &c->pieces[t];
    const int null_pointers = chance(rng, 50); /* drawn on every rank: the ranks' draws stay in step */
    const int none = p->count == 0 && null_pointers;
    const int64_t* lo = none ? NULL : p->lo;
    const int64_t* hi = none ? NULL : p->hi;
    einrel_status status;
    if (tensor->is_input)
      status = einrel_program_set_input(program, tensor->name, c->graph.dtype, tensor->rank, p->count, lo, hi,
                                        none ? NULL : (const void* const*)p->data);
    else
      status = einrel_program_set_output(program, tensor->name, c->graph.dtype, tensor->rank, p->count, lo, hi,
                                         none ? NULL : p->data);
    if (status != EINREL_OK) {
      fail_call(c, tensor->is_input ? "einrel_program_set_input" : "einrel_program_set_output", status);
      return 0;
    }
  }
  return 1;
}

/* Whether `ok` on every rank. */
static int on_every_rank(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* The run report of the execution just made (einrel_program_report, collective): a size query, then the text,
 * which names every rank and the ranks' count. */
static int report_ok(Case* c, einrel_program program) {
  size_t length = 0, again = 0;
  if (!collective_ok(c, "einrel_program_report", einrel_program_report(program, NULL, 0, &length))) return 0;
  char* text = malloc(length + 1);
  const einrel_status status = einrel_program_report(program, text, length + 1, &again);
  char ranks[64];
  snprintf(ranks, sizeof ranks, "\"num_ranks\": %d,", c->ranks);
  int listed = 0;
  for (const char* at = text; status == EINREL_OK && (at = strstr(at, "{\"rank\": ")) != NULL; ++at) ++listed;
  const int ok = status == EINREL_OK && again == length && strlen(text) == length && strstr(text, ranks) != NULL &&
                 listed == c->ranks;
  if (!ok)
    fail(c, "einrel_program_report: status %d, %zu of %zu bytes, %d of %d ranks listed", (int)status,
         status == EINREL_OK ? strlen(text) : 0, length, listed, c->ranks);
  free(text);
  return on_every_rank(ok);
}

/* Execution `execution` on new inputs: einrel, then the reference, then this rank's check. */
static int execute_and_check(Case* c, einrel_program program, Rng* rng, int execution) {
  draw_inputs(c, rng);
  poison_outputs(c);
  if (!collective_ok(c, "einrel_program_execute", einrel_program_execute(program))) return 0;
  if (!report_ok(c, program)) return 0;
  for (int t = 0; t < c->graph.count; ++t)
    if (!c->graph.tensor[t].is_input) evaluate_vertex(&c->graph, t, c->values, c->eps);
  check_outputs(c, execution);
  return 1;
}

/* Moves this rank's pieces to new memory, as a host code that reallocates its arrays would (the old memory
 * is freed after the new is taken, so that the addresses differ). */
static void move_pieces(Case* c) {
  for (int t = 0; t < c->graph.count; ++t) {
    Pieces* p = &c->pieces[t];
    for (int k = 0; k < p->count; ++k) {
      void* moved = malloc((size_t)box_volume(&c->cover[t].box[p->box[k]], c->graph.tensor[t].rank) * element_size(c));
      free(p->data[k]);
      p->data[k] = moved;
    }
  }
}

/* Runs the case through einrel: two executions on new input values, the second half of the time from pieces
 * moved to new memory and bound again with the same boxes. A failure is recorded in c. */
static void run_case(Case* c, Rng* rng) {
  einrel_graph graph = NULL;
  einrel_program program = NULL;
  const einrel_status parsed = einrel_graph_parse(c->graph.text, "fuzz.ein", &graph);
  if (!collective_ok(c, "einrel_graph_parse", parsed)) return;
  if (collective_ok(c, "einrel_program_create", einrel_program_create(graph, MPI_COMM_WORLD, NULL, &program))) {
    int ok = on_every_rank(bind_all(c, program, rng)) && execute_and_check(c, program, rng, 1);
    if (ok && chance(rng, 50)) {
      move_pieces(c);
      ok = on_every_rank(bind_all(c, program, rng));
    }
    if (ok) execute_and_check(c, program, rng, 2);
  }
  einrel_program_free(program);
  einrel_graph_free(graph);
}

static void print_case(const Case* c) {
  printf("case seed %llu on %d ranks:\n%s", (unsigned long long)c->seed, c->ranks, c->graph.text);
  for (int t = 0; t < c->graph.count; ++t) {
    const Tensor* tensor = &c->graph.tensor[t];
    if (!tensor->is_input && !tensor->is_output) continue;
    printf("  boxes of %s:", tensor->name);
    for (int i = 0; i < c->cover[t].count; ++i) {
      const Box* b = &c->cover[t].box[i];
      printf(" [");
      for (int d = 0; d < tensor->rank; ++d)
        printf("%s%lld:%lld", d ? "," : "", (long long)b->lo[d], (long long)b->hi[d]);
      printf("]@%d", b->owner);
    }
    printf("\n");
  }
}

/* Prints the failed case on rank 0: the first failing rank's message and the graph on one line. */
static void report_failure(const Case* c) {
  char* all = c->rank == 0 ? malloc((size_t)c->ranks * MESSAGE_SIZE) : NULL;
  MPI_Gather(c->message, MESSAGE_SIZE, MPI_CHAR, all, MESSAGE_SIZE, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (c->rank != 0) return;
  int first = 0;
  while (first < c->ranks - 1 && all[first * MESSAGE_SIZE] == '\0') ++first;
  char text[TEXT_SIZE];
  snprintf(text, sizeof text, "%s", c->graph.text);
  for (char* s = text; *s; ++s)
    if (*s == '\n') *s = s[1] ? ';' : '\0';
  printf("FAILED case seed %llu on %d ranks: rank %d: %s | graph: %s\n", (unsigned long long)c->seed, c->ranks, first,
         all + first * MESSAGE_SIZE, text);
  fflush(stdout);
  free(all);
}

/* Draws and runs case `seed`; returns whether it passed on every rank. */
static int fuzz_case(uint64_t seed, int rank, int ranks, int verbose) {
  Case* c = calloc(1, sizeof *c);
  c->rank = rank;
  c->ranks = ranks;
  c->seed = seed;
  Rng rng = {seed};
  random_graph(&rng, &c->graph);
  c->eps = c->graph.dtype == EINREL_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  for (int t = 0; t < c->graph.count; ++t) {
    random_cover(&rng, &c->graph.tensor[t], ranks, &c->cover[t]);
    make_pieces(c, t);
    c->values[t].value = calloc((size_t)volume(&c->graph.tensor[t]), sizeof(long double));
    c->values[t].error = calloc((size_t)volume(&c->graph.tensor[t]), sizeof(double));
  }
  if (verbose && rank == 0) print_case(c);
  run_case(c, &rng);
  int any = 0;
  MPI_Allreduce(&c->failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) report_failure(c);
  for (int t = 0; t < c->graph.count; ++t) {
    for (int k = 0; k < c->pieces[t].count; ++k) free(c->pieces[t].data[k]);
    free(c->values[t].value);
    free(c->values[t].error);
  }
  free(c);
  return !any;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0, ranks = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: %s CASES SEED [verbose]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long cases = atol(argv[1]);
  const uint64_t seed = strtoull(argv[2], NULL, 10);
  const int verbose = argc > 3 && strcmp(argv[3], "verbose") == 0;
  long passed = 0;
  for (long i = 0; i < cases; ++i) passed += fuzz_case(seed + (uint64_t)i, rank, ranks, verbose);
  if (rank == 0) printf("%ld passed, %ld failed\n", passed, cases - passed);
  MPI_Finalize();
  return passed == cases ? 0 : 1;
}
