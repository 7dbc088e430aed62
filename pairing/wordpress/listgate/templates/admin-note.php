<?php
/**
 * A note only administrators see.
 *
 * @package Listgate
 *
 * @var array $args "message": plain text.
 */

defined( 'ABSPATH' ) || exit;
?>
<p class="listgate-admin-note"><?php echo esc_html( $args['message'] ); ?></p>
