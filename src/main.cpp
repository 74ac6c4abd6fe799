#include "cli/app.hpp"

int main(int argc, char** argv) {
  return gpuscope::cli::run(argc, argv);
}
