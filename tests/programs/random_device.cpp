// std::random_device as C++ programs use it, one number a line: draws
// from the default device (rdrand or rdseed where the CPU has them), a
// std::mt19937 seeded from a temporary device, and a device on
// /dev/urandom. Built by tests/integration/test-rng.sh where a C++
// compiler exists.
#include <iostream>
#include <random>

int main()
{
    std::random_device rd;
    for (int i = 0; i < 3; i++)
        std::cout << rd() << "\n";
    std::mt19937 gen(std::random_device{}());
    std::cout << gen() << "\n";
    std::random_device ur("/dev/urandom");
    std::cout << ur() << "\n";
    return 0;
}
