/**
 * The demo jar: {@code demo} replays the GLM-5.3 incident on an in-process API server with the real
 * operator, and shows it the way {@code kubectl} would; {@code fake-engine} is the engine stand-in
 * that the end-to-end suite deploys on real clusters. Nothing here ships in the operator's image.
 */
package io.kvguard.demo;
