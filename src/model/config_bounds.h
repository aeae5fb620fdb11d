/* Upper bounds on the integers of a model config, checked as each is parsed, before anything is
 * sized from it (#16: a config with num_layers 1000000 allocated for a minute before failing). The
 * real LTX-2 / LTX-2.3 models have at most 48 layers and widths up to 4096: the bounds leave 20x and
 * 16x of room, and make no product of two of them overflow int64. */
#ifndef LTX2_MODEL_CONFIG_BOUNDS_H
#define LTX2_MODEL_CONFIG_BOUNDS_H

#define LTX2_CONFIG_MAX_LAYERS 1024
#define LTX2_CONFIG_MAX_DIM 65536

#endif
