<?php
/**
 * The enquiry form of the single listing view, sent to POST /v1/leads.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Handles an enquiry: the form posts to the page itself; on
 * template_redirect the plugin sends it to Listgate with the lead key and
 * the form's idempotency token, then redirects on success (POST/redirect/GET)
 * or keeps the visitor's input and shows what went wrong. An enquiry is
 * never lost silently: when it was not sent, the visitor is told so.
 */
class Listgate_Enquiry {

	/**
	 * The nonce action and field.
	 */
	const NONCE = 'listgate_enquiry';

	/**
	 * The form's fields: form input => API field.
	 */
	const FIELDS = array(
		'lg_name'    => 'name',
		'lg_email'   => 'email',
		'lg_phone'   => 'phone',
		'lg_message' => 'message',
	);

	/**
	 * The outcome of this request's submission, for the form to show.
	 *
	 * @var array|null
	 */
	private static $state = null;

	/**
	 * Registers the POST handler.
	 *
	 * @return void
	 */
	public static function register() {
		add_action( 'template_redirect', array( __CLASS__, 'handle' ) );
	}

	/**
	 * Sends a posted enquiry.
	 *
	 * @return void
	 */
	public static function handle() {
		if ( ! isset( $_SERVER['REQUEST_METHOD'] ) || 'POST' !== $_SERVER['REQUEST_METHOD'] || empty( $_POST['listgate_enquiry'] ) ) {
			return;
		}
		$ref    = isset( $_POST['lg_listing_ref'] ) ? absint( wp_unslash( $_POST['lg_listing_ref'] ) ) : 0;
		$values = array(
			'lg_name'    => isset( $_POST['lg_name'] ) ? listgate_clean_text( wp_unslash( $_POST['lg_name'] ), false, 1000 ) : '',
			'lg_email'   => isset( $_POST['lg_email'] ) ? sanitize_text_field( wp_unslash( $_POST['lg_email'] ) ) : '',
			'lg_phone'   => isset( $_POST['lg_phone'] ) ? sanitize_text_field( wp_unslash( $_POST['lg_phone'] ) ) : '',
			'lg_message' => isset( $_POST['lg_message'] ) ? listgate_clean_text( wp_unslash( $_POST['lg_message'] ), true, 10000 ) : '',
		);
		$token  = isset( $_POST['lg_token'] ) ? sanitize_text_field( wp_unslash( $_POST['lg_token'] ) ) : '';
		if ( ! wp_is_uuid( $token ) ) {
			$token = wp_generate_uuid4();
		}
		self::$state = array(
			'ref'    => $ref,
			'values' => $values,
			'token'  => $token,
			'errors' => array(),
			'notice' => null,
		);

		$nonce = isset( $_POST['_listgate_nonce'] ) ? sanitize_text_field( wp_unslash( $_POST['_listgate_nonce'] ) ) : '';
		if ( ! wp_verify_nonce( $nonce, self::NONCE ) ) {
			self::$state['notice'] = array( 'retry', __( 'Your enquiry was NOT sent: the form had expired. Please check your details and send it again.', 'listgate' ) );
			return;
		}
		// A bot filled in the field people cannot see: pretend it worked.
		if ( ! empty( $_POST['lg_website'] ) ) {
			self::redirect_sent();
		}
		$lead_key = (string) get_option( 'listgate_lead_key', '' );
		if ( '' === $lead_key || '' === listgate_base_url() ) {
			self::$state['notice'] = array( 'unavailable', self::unavailable_message() );
			return;
		}

		$lead = array(
			'name'     => $values['lg_name'],
			'type'     => 'inquiry',
			'metadata' => array(
				'source' => 'wordpress',
				'page'   => self::page_url(),
			),
		);
		if ( '' !== $values['lg_email'] ) {
			$lead['email'] = $values['lg_email'];
		}
		if ( '' !== $values['lg_phone'] ) {
			$lead['phone'] = $values['lg_phone'];
		}
		if ( '' !== $values['lg_message'] ) {
			$lead['message'] = $values['lg_message'];
		}
		if ( $ref > 0 ) {
			$lead['listing_ref'] = $ref;
		}

		$response = Listgate_Client::post_lead( $lead, $lead_key, $token );
		// 409: the same form is being sent right now (a double click); its
		// answer is replayed to this request once it is done.
		for ( $try = 0; 409 === $response['status'] && $try < 4; $try++ ) {
			usleep( 500000 );
			$response = Listgate_Client::post_lead( $lead, $lead_key, $token );
		}
		$status = $response['status'];
		if ( 201 === $status || 200 === $status ) {
			self::redirect_sent();
		}
		if ( 422 === $status ) {
			$details = Listgate_Client::error_details( $response['json'] );
			if ( isset( $details['Idempotency-Key'] ) ) {
				// This form's token was used for different details (an
				// earlier attempt went through): ask for a fresh send.
				unset( $details['Idempotency-Key'] );
				self::$state['token'] = wp_generate_uuid4();
				if ( empty( $details ) ) {
					self::$state['notice'] = array( 'retry', __( 'Your enquiry was NOT sent: it changed after an earlier attempt. Please check your details and send it again.', 'listgate' ) );
					return;
				}
			}
			self::$state['errors'] = empty( $details ) ? array( 'body' => __( 'was not accepted', 'listgate' ) ) : $details;
			self::$state['notice'] = array( 'error', __( 'Your enquiry was not sent. Please check the details below.', 'listgate' ) );
			return;
		}
		if ( 401 === $status || 403 === $status ) {
			// phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the site owner must learn that enquiries fail.
			error_log( sprintf( 'Listgate: an enquiry was refused with HTTP %d: the lead key is unknown, revoked or lacks leads:write', $status ) );
			self::$state['notice'] = array( 'unavailable', self::unavailable_message( $status ) );
			return;
		}
		// 409 (the same enquiry is still being sent), 429, 5xx, no answer.
		// phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the site owner must learn that enquiries fail.
		error_log( sprintf( 'Listgate: an enquiry could not be sent (%s); the visitor was asked to try again', 0 === $status ? 'no answer: ' . $response['error'] : 'HTTP ' . $status ) );
		self::$state['notice'] = array( 'retry', __( 'Sorry, your enquiry was NOT sent because of a temporary problem. Please wait a moment and send it again; your details are still in the form.', 'listgate' ) );
	}

	/**
	 * Redirects to the page with lg_enquiry=sent, and ends the request.
	 *
	 * @return void
	 */
	private static function redirect_sent() {
		$url = add_query_arg( 'lg_enquiry', 'sent', listgate_current_url() );
		wp_safe_redirect( $url . '#listgate-enquiry', 303 );
		exit;
	}

	/**
	 * The page the enquiry was sent from, for the lead's metadata.
	 *
	 * @return string
	 */
	private static function page_url() {
		$id  = get_queried_object_id();
		$url = $id ? get_permalink( $id ) : '';
		if ( ! $url ) {
			$url = home_url( listgate_current_url() );
		}
		return substr( (string) $url, 0, 2000 );
	}

	/**
	 * The message shown when enquiries cannot be sent.
	 *
	 * @param int $status The HTTP status Listgate answered, 0 when no lead key is set.
	 * @return string
	 */
	private static function unavailable_message( $status = 0 ) {
		$message = $status
			? __( 'Sorry, enquiries cannot be sent from this website at the moment, and yours was NOT sent. Please contact the agent directly.', 'listgate' )
			: __( 'Sorry, enquiries are not available on this website at the moment. Please contact the agent directly.', 'listgate' );
		if ( listgate_user_is_admin() ) {
			$message .= ' ' . ( $status
				/* translators: %d: HTTP status. */
				? sprintf( __( '(Administrators: Listgate refused the lead key with HTTP %d. Save a key with the leads:write scope under Settings → Listgate.)', 'listgate' ), $status )
				: __( '(Administrators: save an API key with the leads:write scope as the lead key under Settings → Listgate.)', 'listgate' ) );
		}
		return $message;
	}

	/**
	 * The variables of the enquiry-form template for a listing.
	 *
	 * @param array $listing The listing.
	 * @return array
	 */
	public static function form_args( $listing ) {
		$ref   = Listgate_Format::ref( $listing );
		$state = ( null !== self::$state && self::$state['ref'] === $ref ) ? self::$state : null;

		$values = array_fill_keys( array_keys( self::FIELDS ), '' );
		$errors = array();
		$notice = null;
		$token  = wp_generate_uuid4();
		if ( null !== $state ) {
			$values = $state['values'];
			$token  = $state['token'];
			$notice = $state['notice'];
			$errors = $state['errors'];
		} elseif ( 'sent' === listgate_query_var( 'lg_enquiry' ) ) {
			$notice = array( 'success', __( 'Thank you, your enquiry has been sent. The agent will be in touch soon.', 'listgate' ) );
		}

		$available = '' !== (string) get_option( 'listgate_lead_key', '' );
		if ( ! $available && null === $notice ) {
			$notice = array( 'unavailable', self::unavailable_message() );
		}

		// Errors next to an input, and the others (contact, …) at the top.
		$field_errors = array();
		$top_errors   = array();
		$inputs       = array_flip( self::FIELDS );
		$inputs['mobile'] = 'lg_phone';
		foreach ( $errors as $field => $message ) {
			if ( isset( $inputs[ $field ] ) ) {
				$field_errors[ $inputs[ $field ] ][] = array(
					'field'   => $field,
					'message' => self::field_message( $field, $message ),
				);
			} else {
				$top_errors[] = array(
					'field'   => $field,
					'message' => self::field_message( $field, $message ),
				);
			}
		}

		return array(
			'listing_ref'  => $ref,
			'title'        => Listgate_Format::title( $listing ),
			'values'       => $values,
			'token'        => $token,
			'notice'       => $notice,
			'field_errors' => $field_errors,
			'top_errors'   => $top_errors,
			'available'    => $available,
			'action'       => listgate_current_url(),
			'nonce'        => self::NONCE,
		);
	}

	/**
	 * A validation message for the visitor.
	 *
	 * @param string $field   The API field.
	 * @param string $message The API's message, e.g. "is required".
	 * @return string
	 */
	private static function field_message( $field, $message ) {
		$labels = array(
			'name'    => __( 'Name', 'listgate' ),
			'email'   => __( 'E-mail', 'listgate' ),
			'phone'   => __( 'Phone', 'listgate' ),
			'mobile'  => __( 'Phone', 'listgate' ),
			'message' => __( 'Message', 'listgate' ),
		);
		if ( 'contact' === $field ) {
			return __( 'Please give an e-mail address or a phone number so the agent can reply.', 'listgate' );
		}
		if ( 'listing_ref' === $field ) {
			return __( 'This listing can no longer receive enquiries.', 'listgate' );
		}
		$label = isset( $labels[ $field ] ) ? $labels[ $field ] : $field;
		return $label . ' ' . $message;
	}
}
