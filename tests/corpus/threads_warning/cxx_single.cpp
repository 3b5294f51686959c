// Single-threaded C++ (iostream, std::string): poscheck warns that nothing is scheduled.
#include <iostream>
#include <string>

int main() {
    std::string s = "hello";
    std::cout << s << std::endl;
    return 0;
}
