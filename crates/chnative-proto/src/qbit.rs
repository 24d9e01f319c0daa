//! QBit bit-plane transposition and vector views.
