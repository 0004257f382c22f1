// libnice (ICE, RFC 8445) and the GLib main loop it runs on, for Swift. GLib's signal and property
// calls are variadic or macros, which Swift cannot call: the few roomtap needs are wrapped here as
// typed static inline functions.
#ifndef ROOMTAP_CNICE_SHIM_H
#define ROOMTAP_CNICE_SHIM_H
#include <nice/agent.h>
#include <glib.h>
#include <glib-object.h>

/// "candidate-gathering-done" (agent, stream id, user data).
typedef void (*roomtap_nice_gathering_done_fn)(NiceAgent *agent, guint stream_id, gpointer data);
/// "component-state-changed" (agent, stream id, component id, NiceComponentState, user data).
typedef void (*roomtap_nice_state_fn)(NiceAgent *agent, guint stream_id, guint component_id, guint state,
                                      gpointer data);

static inline gulong roomtap_nice_on_gathering_done(NiceAgent *agent, roomtap_nice_gathering_done_fn fn,
                                                    gpointer data) {
    return g_signal_connect_data(agent, "candidate-gathering-done", G_CALLBACK(fn), data, NULL, 0);
}

static inline gulong roomtap_nice_on_state(NiceAgent *agent, roomtap_nice_state_fn fn, gpointer data) {
    return g_signal_connect_data(agent, "component-state-changed", G_CALLBACK(fn), data, NULL, 0);
}

static inline void roomtap_nice_disconnect(NiceAgent *agent, gulong handler) {
    g_signal_handler_disconnect(agent, handler);
}

static inline void roomtap_nice_set_bool(NiceAgent *agent, const char *name, gboolean value) {
    g_object_set(agent, name, value, NULL);
}

static inline void roomtap_nice_set_uint(NiceAgent *agent, const char *name, guint value) {
    g_object_set(agent, name, value, NULL);
}

static inline void roomtap_nice_set_string(NiceAgent *agent, const char *name, const char *value) {
    g_object_set(agent, name, value, NULL);
}

static inline void roomtap_nice_unref(NiceAgent *agent) { g_object_unref(agent); }

/// A repeating timer on `context`, every `ms` milliseconds, calling `fn(data)` until it returns
/// FALSE or the source is destroyed. Returns the source (owned by the caller: g_source_destroy and
/// g_source_unref it).
static inline GSource *roomtap_g_timer(GMainContext *context, guint ms, GSourceFunc fn, gpointer data) {
    GSource *source = g_timeout_source_new(ms);
    g_source_set_callback(source, fn, data, NULL);
    g_source_attach(source, context);
    return source;
}

/// Runs `fn(data)` once on `context`'s thread (soon, from its loop).
static inline void roomtap_g_invoke(GMainContext *context, GSourceFunc fn, gpointer data) {
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, fn, data, NULL);
    g_source_attach(source, context);
    g_source_unref(source);
}

/// Frees a GSList of NiceCandidate (from nice_agent_get_local_candidates).
static inline void roomtap_nice_free_candidates(GSList *list) {
    g_slist_free_full(list, (GDestroyNotify)nice_candidate_free);
}
#endif
