// The decoder layer Gemma 2 and Gemma 3 share: Gemma's x̂·(1 + w) norms, √hidden embedding scale
// and GeGLU (tanh gelu), plus sandwich norms around attention and the MLP, tied embeddings, a
// default window of 4096 and query_pre_attn_scalar 256. Each family's file adds what differs.
#pragma once

#include "model/family.h"

namespace oxyd::model::archs {

/// Sets the shared config defaults, flags and sandwich-norm tensor names on f (after f's names).
void set_gemma_sandwich_layer(Family& f);

}  // namespace oxyd::model::archs
