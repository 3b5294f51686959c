// Buggy: a transfer locks `from` then `to`; two opposite transfers deadlock.
#include <mutex>
#include <thread>

struct Account {
    std::mutex m;
    int balance = 100;
};

static void transfer(Account &from, Account &to, int amount) {
    std::lock_guard<std::mutex> a(from.m);
    std::lock_guard<std::mutex> b(to.m);
    from.balance -= amount;
    to.balance += amount;
}

int main() {
    Account x, y;
    std::thread t1(transfer, std::ref(x), std::ref(y), 10);
    std::thread t2(transfer, std::ref(y), std::ref(x), 20);
    t1.join();
    t2.join();
    return x.balance + y.balance == 200 ? 0 : 1;
}
