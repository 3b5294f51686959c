//! Give libpos.so the soname `libpos.so`: a program linked with `-lpos` (the `-fsanitize=thread`
//! builds) then records that name, and the dynamic loader reuses the copy the runner already
//! preloaded instead of loading a second one from another path.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpos.so");
    println!("cargo:rerun-if-changed=build.rs");
}
