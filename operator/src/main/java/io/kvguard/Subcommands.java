package io.kvguard;

import io.kvguard.cli.CheckCommand;
import java.util.Arrays;

/** Dispatches the jar's subcommands; anything else is a usage error (exit 2). */
final class Subcommands {
  static final String USAGE =
      """
      Usage: java -jar kvguard-operator.jar [COMMAND]
        (no command)   run the operator against the current kubeconfig or in-cluster config
        check          probe one live engine and judge its KV pool (exit 0 verified, 1 refused, 2 failed)
                       see: check --help
      The demo and the end-to-end suite's fake engine ship separately: operator/demo/target/kvguard-demo.jar.
      """;

  private Subcommands() {}

  static int run(String[] args) throws Exception {
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    return switch (args[0]) {
      case "check" -> CheckCommand.standard().run(rest, System.out, System.err);
      case "help" -> {
        System.out.print(USAGE);
        yield 0;
      }
      default -> {
        System.err.println("kvguard: unknown command '" + args[0] + "'");
        System.err.print(USAGE);
        yield 2;
      }
    };
  }
}
