// Single-threaded Rust: std imports pthread functions (pthread_self, keys) in every
// program, but this one creates no thread: poscheck warns.
fn main() {
    let v: Vec<u32> = (1..=10).collect();
    println!("{}", v.iter().sum::<u32>());
}
