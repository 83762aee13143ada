package io.kvguard.cli;

import io.kvguard.customresource.SecretKeyRef;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * {@code --api-key-file}: the bearer token check sends to the engine, read from a file because a
 * value on the command line shows in {@code ps} and in shell history. No message ever quotes what
 * the file holds.
 */
record ApiKeyFile(Path file, String key) {
  /** More than any API key: a larger file is the wrong file, and is not read whole. */
  static final int MAX_BYTES = 16 * 1024;

  static ApiKeyFile read(String name) throws UsageException {
    Path file = Path.of(name);
    String where = "--api-key-file " + name;
    if (Files.isDirectory(file)) {
      throw new UsageException(where + " is a directory, not a file holding the engine's API key");
    }
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    } catch (NoSuchFileException e) {
      throw new UsageException(where + ": no such file");
    } catch (AccessDeniedException e) {
      throw new UsageException(where + " cannot be read: permission denied");
    } catch (IOException e) {
      throw new UsageException(where + " cannot be read (" + e.getClass().getSimpleName() + ")");
    }
    if (bytes.length > MAX_BYTES) {
      throw new UsageException(
          where + " is larger than " + MAX_BYTES + " bytes: that is no API key file");
    }
    // `echo KEY > file` and editors end the file with a line break; the key never does.
    String key = new String(bytes, StandardCharsets.UTF_8).stripTrailing();
    if (key.isEmpty()) {
      throw new UsageException(where + " is empty: it must hold the engine's API key");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new UsageException(
            where
                + ": character "
                + (i + 1)
                + " of the key is a space, a line break, a control or a non-ASCII character,"
                + " which an Authorization header cannot carry; the file must hold the key alone");
      }
    }
    return new ApiKeyFile(file, key);
  }

  /**
   * What a user of {@code --model-deployment} runs to write the key the operator sends into a file
   * only they can read.
   */
  static String kubectlCommand(SecretKeyRef ref, String namespace) {
    String key = ref.effectiveKey().replace(".", "\\.");
    return "(umask 077; kubectl"
        + (namespace == null || namespace.isBlank() ? "" : " -n " + namespace)
        + " get secret "
        + ref.getName()
        + " -o jsonpath='{.data."
        + key
        + "}' | base64 -d > api-key)";
  }

  @Override
  public String toString() {
    // The key must never reach a message through a record's default toString.
    return "ApiKeyFile[" + file + "]";
  }
}
