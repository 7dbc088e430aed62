<?php
/**
 * Small helpers shared by the plugin: options, the connection state, URLs,
 * templates and admin notices.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Normalises a Listgate address as an administrator typed it: an absolute
 * http(s) URL, without a trailing slash and without the trailing "/v1"
 * (the plugin adds it).
 *
 * @param string $raw The address, e.g. "https://api.listgate.example/v1/".
 * @return string The base address, e.g. "https://api.listgate.example", or "" when $raw is not an http(s) URL.
 */
function listgate_normalize_base_url( $raw ) {
	$url = trim( (string) $raw );
	if ( '' === $url || ! preg_match( '#^https?://[^/?\#\s]+#i', $url ) ) {
		return '';
	}
	$url = esc_url_raw( $url, array( 'http', 'https' ) );
	if ( '' === $url ) {
		return '';
	}
	$parts = wp_parse_url( $url );
	if ( empty( $parts['host'] ) || empty( $parts['scheme'] ) || ! in_array( strtolower( $parts['scheme'] ), array( 'http', 'https' ), true )
		|| ! preg_match( '/^[A-Za-z0-9.\-\[\]:]+$/', $parts['host'] ) ) {
		return '';
	}
	if ( isset( $parts['query'] ) || isset( $parts['fragment'] ) ) {
		$url = strtok( $url, '?#' );
	}
	$url  = untrailingslashit( $url );
	$path = isset( $parts['path'] ) ? untrailingslashit( $parts['path'] ) : '';
	if ( str_ends_with( strtolower( $path ), '/v1' ) ) {
		$url = substr( $url, 0, -3 );
	}
	return untrailingslashit( $url );
}

/**
 * The configured Listgate base address (without "/v1").
 *
 * @return string The address, or "" when none is set.
 */
function listgate_base_url() {
	return listgate_normalize_base_url( get_option( 'listgate_base_url', '' ) );
}

/**
 * The full address of an API path.
 *
 * @param string $path A path below /v1, e.g. "pairing/device".
 * @return string The URL, e.g. "https://api.listgate.example/v1/pairing/device".
 */
function listgate_api_url( $path ) {
	return listgate_base_url() . '/v1/' . ltrim( $path, '/' );
}

/**
 * Whether the site is paired: a base address, a key and a site id are set.
 *
 * @return bool
 */
function listgate_is_connected() {
	return '' !== listgate_base_url()
		&& '' !== (string) get_option( 'listgate_api_key', '' )
		&& '' !== (string) get_option( 'listgate_site_id', '' );
}

/**
 * The scopes of the paired key.
 *
 * @return string[]
 */
function listgate_scopes() {
	$scopes = get_option( 'listgate_scopes', array() );
	if ( is_string( $scopes ) ) {
		$scopes = '' === $scopes ? array() : explode( ',', $scopes );
	}
	return array_values( array_filter( array_map( 'sanitize_text_field', (array) $scopes ) ) );
}

/**
 * A key in a form safe to show: its prefix and its last four characters.
 *
 * @param string $key An API key.
 * @return string E.g. "lgk_…abcd"; "" for no key.
 */
function listgate_mask_key( $key ) {
	$key = (string) $key;
	if ( '' === $key ) {
		return '';
	}
	if ( strlen( $key ) < 12 ) {
		return '…';
	}
	return substr( $key, 0, 4 ) . '…' . substr( $key, -4 );
}

/**
 * Stores an option with autoload "no", creating it when missing.
 *
 * @param string $name  The option's name.
 * @param mixed  $value The value.
 * @return void
 */
function listgate_update_private_option( $name, $value ) {
	if ( null === get_option( $name, null ) ) {
		add_option( $name, $value, '', 'no' );
		return;
	}
	update_option( $name, $value, false );
}

/**
 * Forgets the paired key, its site, scopes and beacon id, any pairing in
 * progress and every cached response. The lead key, the base address and
 * the views switch stay.
 *
 * @return void
 */
function listgate_forget_connection() {
	delete_option( 'listgate_api_key' );
	delete_option( 'listgate_site_id' );
	delete_option( 'listgate_key_id' );
	delete_option( 'listgate_scopes' );
	delete_option( Listgate_Views::BEACON_OPTION );
	delete_transient( Listgate_Pairing::TRANSIENT );
	Listgate_Client::flush_cache();
}

/**
 * Whether the user sees administrator hints in the front end.
 *
 * @return bool
 */
function listgate_user_is_admin() {
	return current_user_can( 'manage_options' );
}

/**
 * The settings page's address.
 *
 * @param array $args Query arguments to add.
 * @return string
 */
function listgate_settings_url( $args = array() ) {
	return add_query_arg( array_merge( array( 'page' => 'listgate' ), $args ), admin_url( 'options-general.php' ) );
}

/**
 * Prints a template of the plugin. A theme may override it with
 * listgate/{name}.php in the (child) theme's directory.
 *
 * @param string $name The template's name, e.g. "card".
 * @param array  $args Variables for the template, read as $args['…'].
 * @return void
 */
function listgate_template( $name, $args = array() ) {
	$name = sanitize_file_name( $name );
	$file = locate_template( 'listgate/' . $name . '.php' );
	if ( '' === $file ) {
		$file = LISTGATE_DIR . 'templates/' . $name . '.php';
	}
	if ( ! is_readable( $file ) ) {
		return;
	}
	$args = (array) apply_filters( 'listgate_template_args', $args, $name );
	include $file;
}

/**
 * Renders a template to a string.
 *
 * @param string $name The template's name.
 * @param array  $args Variables for the template.
 * @return string The HTML.
 */
function listgate_render( $name, $args = array() ) {
	ob_start();
	listgate_template( $name, $args );
	return (string) ob_get_clean();
}

/**
 * Queues a notice for the current user's next admin page view.
 *
 * @param string $type    "success", "error", "warning" or "info".
 * @param string $message Plain text.
 * @return void
 */
function listgate_queue_notice( $type, $message ) {
	$key     = 'listgate_notice_' . get_current_user_id();
	$notices = get_transient( $key );
	if ( ! is_array( $notices ) ) {
		$notices = array();
	}
	$notices[] = array(
		'type'    => $type,
		'message' => $message,
	);
	set_transient( $key, $notices, 5 * MINUTE_IN_SECONDS );
}

/**
 * Returns and forgets the current user's queued notices.
 *
 * @return array[] Each with "type" and "message".
 */
function listgate_take_notices() {
	$key     = 'listgate_notice_' . get_current_user_id();
	$notices = get_transient( $key );
	delete_transient( $key );
	return is_array( $notices ) ? $notices : array();
}

/**
 * The current request's address relative to the host, without the
 * plugin's one-shot parameters. Links and forms of the shortcodes build on
 * it, so other query variables (page_id, …) are kept.
 *
 * @param string[] $drop Query arguments to remove as well.
 * @return string
 */
function listgate_current_url( $drop = array() ) {
	$drop = array_merge( array( 'lg_enquiry' ), $drop );
	// Filters left empty in the form need not travel along in every link.
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only names of empty parameters are read.
	foreach ( $_GET as $name => $value ) {
		if ( is_string( $name ) && str_starts_with( $name, 'lg_' ) && '' === $value ) {
			$drop[] = $name;
		}
	}
	return remove_query_arg( $drop );
}

/**
 * A value from the query string, as text.
 *
 * @param string $name The parameter.
 * @return string The sanitised value, "" when absent.
 */
function listgate_query_var( $name ) {
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- read-only visitor filters.
	if ( ! isset( $_GET[ $name ] ) || ! is_string( $_GET[ $name ] ) ) {
		return '';
	}
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- read-only visitor filters.
	return sanitize_text_field( wp_unslash( $_GET[ $name ] ) );
}

/**
 * Cleans text a visitor typed that is sent to Listgate as data (never
 * rendered unescaped): valid UTF-8, no control characters, trimmed. Unlike
 * sanitize_text_field() it keeps "<" and "&" as typed, so a message such as
 * "budget < $500k" reaches the agent intact.
 *
 * @param string $text      The input, unslashed.
 * @param bool   $multiline Whether line breaks are kept.
 * @param int    $max       The most characters kept.
 * @return string
 */
function listgate_clean_text( $text, $multiline = false, $max = 5000 ) {
	$text = wp_check_invalid_utf8( (string) $text, true );
	$text = str_replace( array( "\r\n", "\r" ), "\n", $text );
	$text = (string) preg_replace( '/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/u', '', $text );
	if ( ! $multiline ) {
		$text = (string) preg_replace( '/\s+/u', ' ', $text );
	}
	$text = trim( $text );
	return function_exists( 'mb_substr' ) ? mb_substr( $text, 0, $max ) : substr( $text, 0, $max );
}
