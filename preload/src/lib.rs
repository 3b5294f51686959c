//! libpos.so (being written)
