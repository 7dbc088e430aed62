<?php
/**
 * The enquiry form of a listing.
 *
 * @package Listgate
 *
 * @var array $args See Listgate_Enquiry::form_args(): "listing_ref", "title",
 *                  "values" (lg_* => text), "token", "notice" ([type,
 *                  message] or null), "field_errors" (input => list of
 *                  [field, message]), "top_errors" (list of [field,
 *                  message]), "available" (a lead key is set), "action", "nonce".
 */

defined( 'ABSPATH' ) || exit;

$listgate_values = $args['values'];
$listgate_inputs = array(
	'lg_name'    => array( __( 'Name', 'listgate' ), 'text', 'name' ),
	'lg_email'   => array( __( 'E-mail', 'listgate' ), 'text', 'email' ),
	'lg_phone'   => array( __( 'Phone', 'listgate' ), 'tel', 'tel' ),
	'lg_message' => array( __( 'Message', 'listgate' ), 'textarea', 'off' ),
);
?>
<section class="listgate-enquiry-section" id="listgate-enquiry">
	<h3><?php esc_html_e( 'Enquire about this property', 'listgate' ); ?></h3>

	<?php if ( null !== $args['notice'] ) : ?>
		<div class="listgate-notice listgate-notice-<?php echo esc_attr( $args['notice'][0] ); ?>" role="<?php echo esc_attr( 'success' === $args['notice'][0] ? 'status' : 'alert' ); ?>">
			<p><?php echo esc_html( $args['notice'][1] ); ?></p>
		</div>
	<?php endif; ?>

	<?php if ( $args['available'] ) : ?>
		<form class="listgate-enquiry" method="post" action="<?php echo esc_url( $args['action'] . '#listgate-enquiry' ); ?>" novalidate>
			<input type="hidden" name="listgate_enquiry" value="1">
			<input type="hidden" name="lg_listing_ref" value="<?php echo esc_attr( (string) $args['listing_ref'] ); ?>">
			<input type="hidden" name="lg_token" value="<?php echo esc_attr( $args['token'] ); ?>">
			<?php wp_nonce_field( $args['nonce'], '_listgate_nonce', false ); ?>

			<?php if ( ! empty( $args['top_errors'] ) ) : ?>
				<ul class="listgate-form-errors">
					<?php foreach ( $args['top_errors'] as $listgate_error ) : ?>
						<li><span class="listgate-field-error" data-field="<?php echo esc_attr( $listgate_error['field'] ); ?>"><?php echo esc_html( $listgate_error['message'] ); ?></span></li>
					<?php endforeach; ?>
				</ul>
			<?php endif; ?>

			<?php foreach ( $listgate_inputs as $listgate_name => $listgate_input ) : ?>
				<?php
				$listgate_id     = 'listgate-' . str_replace( '_', '-', $listgate_name ) . '-' . $args['listing_ref'];
				$listgate_errors = isset( $args['field_errors'][ $listgate_name ] ) ? $args['field_errors'][ $listgate_name ] : array();
				?>
				<p class="listgate-field listgate-field-<?php echo esc_attr( substr( $listgate_name, 3 ) ); ?><?php echo esc_attr( empty( $listgate_errors ) ? '' : ' listgate-field-invalid' ); ?>">
					<label for="<?php echo esc_attr( $listgate_id ); ?>"><?php echo esc_html( $listgate_input[0] ); ?></label>
					<?php if ( 'textarea' === $listgate_input[1] ) : ?>
						<textarea name="<?php echo esc_attr( $listgate_name ); ?>" id="<?php echo esc_attr( $listgate_id ); ?>" rows="5" maxlength="5000"
							<?php echo empty( $listgate_errors ) ? '' : 'aria-invalid="true"'; ?>
							placeholder="<?php echo esc_attr( sprintf( /* translators: %s: listing title. */ __( 'I would like to know more about %s.', 'listgate' ), $args['title'] ) ); ?>"><?php echo esc_textarea( $listgate_values[ $listgate_name ] ); ?></textarea>
					<?php else : ?>
						<input type="<?php echo esc_attr( $listgate_input[1] ); ?>" name="<?php echo esc_attr( $listgate_name ); ?>" id="<?php echo esc_attr( $listgate_id ); ?>"
							value="<?php echo esc_attr( $listgate_values[ $listgate_name ] ); ?>" autocomplete="<?php echo esc_attr( $listgate_input[2] ); ?>"
							<?php echo 'lg_email' === $listgate_name ? 'inputmode="email" spellcheck="false"' : ''; ?>
							<?php echo empty( $listgate_errors ) ? '' : 'aria-invalid="true"'; ?>>
					<?php endif; ?>
					<?php foreach ( $listgate_errors as $listgate_error ) : ?>
						<span class="listgate-field-error" data-field="<?php echo esc_attr( $listgate_error['field'] ); ?>"><?php echo esc_html( $listgate_error['message'] ); ?></span>
					<?php endforeach; ?>
				</p>
			<?php endforeach; ?>

			<p class="listgate-hp" aria-hidden="true">
				<label><?php esc_html_e( 'Leave this field empty', 'listgate' ); ?> <input type="text" name="lg_website" value="" tabindex="-1" autocomplete="off"></label>
			</p>

			<p class="listgate-field listgate-field-submit">
				<button type="submit" class="listgate-enquiry-submit"><?php esc_html_e( 'Send enquiry', 'listgate' ); ?></button>
			</p>
		</form>
	<?php endif; ?>
</section>
