// OpenSSL libcrypto for Swift: digests (EVP) and HMAC. Only what RoomTapStorage uses.
#ifndef ROOMTAP_COPENSSL_SHIM_H
#define ROOMTAP_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#endif
