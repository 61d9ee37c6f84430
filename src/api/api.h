/* api/api.h — the top layer: loading (format detection, then a format's reader, then a family's
 * builder) behind mlrt.h's entry points. It may use every layer (README, "Architecture"). */
#ifndef MLRT__API_H
#define MLRT__API_H
#include "../formats/formats.h"
#include "../model/model.h"

/* The model a description makes, by its family's builder (d->type); frees what d still owns. */
mlrt_model *mlrt__build(mlrt__desc *d, mlrt_error *err);

#endif
