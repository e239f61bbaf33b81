/*
 * kafka_native_export.h: the markers of the public ABI.
 *
 * The library is built with -fvisibility=hidden: a function is exported
 * from libkafka-native.so only when its declaration in a public header says
 * KN_API. tools/abi/check-exports (ctest abi_exports) fails when the
 * exported symbols and the KN_API declarations differ, so an internal
 * helper cannot leak into the ABI and a public function cannot be
 * forgotten. KN_DEPRECATED marks an old name kept as an alias; see
 * "ABI policy" in docs/architecture.md.
 *
 * Included by the public headers; do not include it on its own.
 */
#ifndef KAFKA_NATIVE_EXPORT_H
#define KAFKA_NATIVE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define KN_API __attribute__((visibility("default")))
#define KN_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define KN_API
#define KN_DEPRECATED(msg)
#endif

#endif
